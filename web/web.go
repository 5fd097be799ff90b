// Package web holds the server-rendered templates (the widget's, and the
// panel's under templates/panel) and the static assets
// (styles, the widget's script, the embed script), embedded in the binary.
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
)

//go:embed templates static
var files embed.FS

// Static is the static assets, served under /static/.
var Static, _ = fs.Sub(files, "static")

// Templates parses the widget's page templates.
func Templates() (*template.Template, error) {
	return template.New("").Funcs(Funcs).ParseFS(files, "templates/*.html")
}

// Funcs are the template functions every page has: asset.
var Funcs = template.FuncMap{"asset": Asset}

// versions are the static files' content hashes, by name.
var versions = func() map[string]string {
	out := map[string]string{}
	_ = fs.WalkDir(Static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Static, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[p] = hex.EncodeToString(sum[:6])
		return nil
	})
	return out
}()

// Asset is the URL of a static file that changes with its content
// (/static/app.js?v=HASH), so a browser may keep it for a year.
func Asset(name string) string {
	return "/static/" + name + "?v=" + versions[name]
}

// Version is a static file's content hash ("" for no such file).
func Version(name string) string { return versions[name] }

// Panel is the admin panel's templates: layout.html and one file per page.
var Panel, _ = fs.Sub(files, "templates/panel")
