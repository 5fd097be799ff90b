package importer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"salon/booking"
	"salon/i18n"
)

// Bounds of what one row of a file may cost. A line that never ends (an
// import of /dev/zero grew to 23.8 GB) stops the import at MaxLine, naming
// the line; a cell over MaxCell rejects its row, and reading goes on; a
// row keeps its first MaxFields cells and counts the rest (no column lies
// past them); a quote that opens a cell and does not close within
// MaxQuoted rejects the row it opened, and reading goes on from the line
// after it (an unterminated quote swallowed a thousand rows into one,
// whose only complaint was "phone: required"). So a row holds at most
// MaxFields×MaxCell bytes, and the scanner MaxQuoted more.
const (
	MaxLine   = 64 << 20 // bytes of one physical line (read, not kept)
	MaxCell   = 8 << 10  // bytes of one cell (a quoted one may span lines)
	MaxQuoted = 64 << 10 // bytes from a cell's opening quote within which it must close
	MaxFields = 1000     // cells of one row that are kept
)

// FileError stops an import at a line that cannot be read as a row at all
// (longer than MaxLine): the rows before it were imported (or rehearsed).
// It unwraps to booking.ErrInvalid: the input is rejected.
type FileError struct {
	Line   int
	Reason i18n.Text
	msg    string // in the import's language
}

func (e *FileError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return fmt.Sprintf("line %d: %s; the import stopped there", e.Line, e.Reason.String())
}

// Unwrap returns booking.ErrInvalid.
func (e *FileError) Unwrap() error { return booking.ErrInvalid }

// scanner splits decoded text into records: RFC 4180 fields (a cell that
// starts with a quote runs to the quote that ends it, "" inside is a
// quote), with lazy quotes (a quote elsewhere is text), CRLF or LF, and
// the bounds above. It reads a byte at a time from a buffer, holding at
// most one record.
type scanner struct {
	r     *bufio.Reader
	back  []byte // text given back after an unterminated quote, read first
	delim byte
	line  int // the physical line of the next byte
	raw   []byte
	// dropped counts the cells of the last record past MaxFields that
	// were not blank.
	dropped int
}

func newScanner(r *bufio.Reader, delim rune) *scanner {
	return &scanner{r: r, delim: byte(delim), line: 1}
}

func (s *scanner) readByte() (byte, error) {
	if len(s.back) > 0 {
		b := s.back[0]
		s.back = s.back[1:]
		return b, nil
	}
	return s.r.ReadByte()
}

// Scanner states within a record.
const (
	fieldStart = iota
	unquoted
	quoted
	quoteInQuoted // a quote inside a quoted cell: its end, or the first of ""
)

// next returns the next record (blank ones too) and the line it starts
// on; io.EOF at the end. A row that cannot be taken whole is a
// *LineError (reading goes on); a line past MaxLine, a *FileError.
func (s *scanner) next() ([]string, int, error) {
	start := s.line
	s.raw = s.raw[:0]
	var (
		fields    []string
		cell      []byte
		state     = fieldStart
		lineLen   int
		read      bool
		tooLong   int // 1-based column of the first cell over MaxCell
		quoteCol  int // 1-based column of the cell a quote opened
		quoteLine int // the line it opened on
	)
	s.dropped = 0
	cells := 0
	endCell := func() {
		cells++
		switch {
		case len(cell) > MaxCell:
			if tooLong == 0 {
				tooLong = cells
			}
		case cells > MaxFields:
			if len(bytes.TrimSpace(cell)) > 0 {
				s.dropped++
			}
		default:
			fields = append(fields, string(cell))
		}
		cell = cell[:0]
	}
	finish := func() ([]string, int, error) {
		if tooLong > 0 {
			return nil, start, &LineError{Line: start, Column: tooLong, Reason: i18n.New("longer than %d KiB", MaxCell>>10)}
		}
		return fields, start, nil
	}
	for {
		b, err := s.readByte()
		if errors.Is(err, io.EOF) {
			switch {
			case !read:
				return nil, start, io.EOF
			case state == quoted:
				return s.unterminated(start, quoteLine, quoteCol)
			}
			endCell()
			return finish()
		}
		if err != nil {
			return nil, start, fmt.Errorf("read: %w", err)
		}
		read = true
		if state == quoted || state == quoteInQuoted {
			// Only an open quote may need its text again (unterminated).
			if s.raw = append(s.raw, b); len(s.raw) > MaxQuoted {
				return s.unterminated(start, quoteLine, quoteCol)
			}
		}
		if b == '\n' {
			s.line++
			lineLen = 0
		} else if lineLen++; lineLen > MaxLine {
			return nil, start, &FileError{Line: s.line, Reason: i18n.New("longer than %d MiB: not a line of a CSV file", MaxLine>>20)}
		}
		switch state {
		case fieldStart:
			switch b {
			case '"':
				state, quoteCol, quoteLine = quoted, len(fields)+1, s.line
				s.raw = append(s.raw[:0], b)
				continue
			case s.delim:
				endCell()
				continue
			case '\n':
				endCell()
				return finish()
			}
			state = unquoted
			cell = appendCell(cell, b)
		case unquoted:
			switch b {
			case s.delim:
				endCell()
				state = fieldStart
			case '\n':
				cell = trimCR(cell)
				endCell()
				return finish()
			default:
				cell = appendCell(cell, b)
			}
		case quoted:
			if b == '"' {
				state = quoteInQuoted
				continue
			}
			if b == '\n' {
				cell = trimCR(cell)
			}
			cell = appendCell(cell, b)
		case quoteInQuoted:
			switch b {
			case '"':
				cell = appendCell(cell, '"')
				state = quoted
			case s.delim:
				endCell()
				state = fieldStart
			case '\n':
				endCell()
				return finish()
			case '\r':
				// CRLF after the closing quote: the newline ends the record.
			default:
				// A lone quote inside a quoted cell is text (lazy quotes).
				cell = appendCell(appendCell(cell, '"'), b)
				state = quoted
			}
		}
	}
}

// appendCell adds b to a cell, storing no more than one byte past
// MaxCell (enough to tell that it is too long).
func appendCell(cell []byte, b byte) []byte {
	if len(cell) > MaxCell {
		return cell
	}
	return append(cell, b)
}

func trimCR(cell []byte) []byte {
	if n := len(cell); n > 0 && cell[n-1] == '\r' {
		return cell[:n-1]
	}
	return cell
}

// unterminated rejects the row starting at line start, whose quote
// (opened on line at, in column col) did not close within MaxQuoted, and
// gives back the text after that line, to be read again as rows of their
// own.
func (s *scanner) unterminated(start, at, col int) ([]string, int, error) {
	if i := bytes.IndexByte(s.raw, '\n'); i >= 0 {
		s.back = append(append([]byte{}, s.raw[i+1:]...), s.back...)
	} else {
		// The quote's line goes on: the rest of it is the same row.
		if err := s.skipLine(); err != nil {
			return nil, start, err
		}
	}
	s.line = at + 1
	return nil, start, &LineError{Line: start, Column: col, Reason: i18n.New("the quote that opens this cell does not close within %d KiB; the lines after it are read as rows of their own", MaxQuoted>>10)}
}

// skipLine reads to the end of the current line (bounded by MaxLine).
func (s *scanner) skipLine() error {
	for n := 0; ; n++ {
		b, err := s.readByte()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("read: %w", err)
		case b == '\n':
			return nil
		case n > MaxLine:
			return &FileError{Line: s.line, Reason: i18n.New("longer than %d MiB: not a line of a CSV file", MaxLine>>20)}
		}
	}
}
