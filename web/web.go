// Package web holds the server-rendered templates and the static assets
// (styles, the widget's script, the embed script), embedded in the binary.
package web

import (
	"embed"
	"html/template"
	"io/fs"
)

//go:embed templates static
var files embed.FS

// Static is the static assets, served under /static/.
var Static, _ = fs.Sub(files, "static")

// Templates parses the page templates.
func Templates() (*template.Template, error) {
	return template.ParseFS(files, "templates/*.html")
}
