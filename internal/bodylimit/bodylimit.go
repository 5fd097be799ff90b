// Package bodylimit bounds what a request's body may cost before any of
// it is read. The server streams request bodies (fiber's
// StreamRequestBody: at most a few KiB are read before a handler runs), so
// each route decides, from its own limit, whether to read the body at
// all: a body declared larger is refused from its headers, one of unknown
// length is read to the limit and no further, and a compressed one (which
// fiber would inflate without a bound) is refused.
package bodylimit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gofiber/fiber/v2"
)

// ErrTooLarge: the body is larger than the route takes.
var ErrTooLarge = errors.New("the request body is too large")

// ErrEncoded: the body is compressed (Content-Encoding), which no route
// takes.
var ErrEncoded = errors.New("compressed request bodies are not accepted")

// DrainMax is the most of a refused body that is read (and thrown away,
// a few KiB at a time) so that its client, still sending it, sees the
// answer; past it the connection is closed unread.
const DrainMax = 64 << 20

// Read makes sure the request's body is at most n bytes, reading no more
// than n+1 of it, and holds it in memory for c.Body(). A refused body is
// never kept: it is drained (see Drain), or its connection closed.
func Read(c *fiber.Ctx, n int) error {
	req := c.Request()
	if enc := req.Header.Peek(fiber.HeaderContentEncoding); len(enc) > 0 && string(enc) != "identity" {
		Drain(c)
		return ErrEncoded
	}
	if req.Header.ContentLength() > n {
		Drain(c)
		return ErrTooLarge
	}
	if s := req.BodyStream(); s != nil {
		body, err := io.ReadAll(io.LimitReader(s, int64(n)+1))
		if err != nil {
			c.Set(fiber.HeaderConnection, "close")
			return fmt.Errorf("read the request body: %w", err)
		}
		if len(body) > n {
			Drain(c)
			return ErrTooLarge
		}
		req.SetBody(body)
		return nil
	}
	if len(req.Body()) > n { // read already, by a server that does not stream
		return ErrTooLarge
	}
	return nil
}

// Stream returns the body as a reader of at most n bytes (a longer body
// reads as ErrTooLarge at its n+1st byte), for a handler that streams it;
// the body is refused from its headers as Read does.
func Stream(c *fiber.Ctx, n int64) (io.Reader, error) {
	req := c.Request()
	if enc := req.Header.Peek(fiber.HeaderContentEncoding); len(enc) > 0 && string(enc) != "identity" {
		Drain(c)
		return nil, ErrEncoded
	}
	if int64(req.Header.ContentLength()) > n {
		Drain(c)
		return nil, ErrTooLarge
	}
	r := req.BodyStream()
	if r == nil {
		r = bytes.NewReader(req.Body()) // read already, by a server that does not stream
	}
	return &limited{r: io.LimitReader(r, n+1), max: n, c: c}, nil
}

// limited reads up to max bytes, and fails at the next one.
type limited struct {
	r         io.Reader
	read, max int64
	c         *fiber.Ctx
}

func (l *limited) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.read += int64(n)
	if l.read > l.max {
		Drain(l.c)
		return n - int(l.read-l.max), ErrTooLarge
	}
	return n, err
}

// Guard is the server's first middleware: after the request, a body that
// was streamed and not read to its end (by a handler that refused it, or
// one that never reads bodies: a 404, a redirect to the login) is drained,
// up to GuardDrain, or its connection closed. Left on the connection, its
// bytes would be read as the next request: a request smuggled past the
// proxy in front (its own X-Forwarded-For, say).
//
// The drain has GuardDrainTime, whatever the route gave its body (an
// upload's is minutes): a refused body sent slowly does not hold the
// connection.
func Guard(c *fiber.Ctx) error {
	err := c.Next()
	drain(c, GuardDrain)
	return err
}

// drain reads what is left of c's streamed body, up to max and for
// GuardDrainTime at most, and closes the connection after the answer when
// it could not read it all.
func drain(c *fiber.Ctx, max int64) {
	s := c.Request().BodyStream()
	if s == nil {
		return // read already, by a server that does not stream
	}
	if conn := c.Context().Conn(); conn != nil {
		_ = conn.SetReadDeadline(time.Now().Add(GuardDrainTime))
	}
	if n, err := io.Copy(io.Discard, io.LimitReader(s, max+1)); err != nil || n > max {
		c.Set(fiber.HeaderConnection, "close")
	}
}

// GuardDrain is the most of an unread body Guard reads before it closes the
// connection instead, and GuardDrainTime the longest it reads.
const (
	GuardDrain     = 1 << 20
	GuardDrainTime = 5 * time.Second
)

// Drain throws away the rest of a refused body, up to DrainMax, so that
// a client still sending it reads the answer; a longer one, or one that
// fails, closes the connection after the answer.
func Drain(c *fiber.Ctx) { drain(c, DrainMax) }
