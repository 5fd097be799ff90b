package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// cmdClient is `salon client export|erase --salon SLUG --phone P`: a
// client's personal data, exported as JSON or erased (the bookings stay,
// for the salon's counts; the erasure is in the audit log).
func cmdClient(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	const use = "usage: salon client export|erase --salon SLUG --phone PHONE [--out FILE] (erase also needs --yes)"
	if len(args) == 0 || (args[0] != "export" && args[0] != "erase") {
		return usagef("%s", use)
	}
	fs := newFlagSet("client " + args[0])
	slug := fs.String("salon", "", "salon slug")
	phone := fs.String("phone", "", "the client's phone")
	out := fs.String("out", "", "file to write the export to (default: standard output)")
	yes := fs.Bool("yes", false, "erase without asking")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *slug == "" || *phone == "" {
		return usagef("%s", use)
	}
	svc, s, closeDB, err := openSalon(ctx, getenv, *slug)
	if err != nil {
		return err
	}
	defer closeDB()
	if args[0] == "erase" {
		if !*yes {
			return usagef("erasing a client cannot be undone: add --yes")
		}
		kept, err := svc.EraseClient(ctx, s.ID, *phone, 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "erased the client's personal data; %d bookings kept, without it\n", kept)
		return nil
	}
	rec, err := svc.ExportClient(ctx, s.ID, *phone, 0)
	if err != nil {
		return err
	}
	w, closeOut, err := output(*out, stdout)
	if err != nil {
		return err
	}
	defer closeOut()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rec)
}
