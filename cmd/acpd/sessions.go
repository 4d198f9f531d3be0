package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"acpd/model"
	"acpd/session"
)

func newSessionsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show and remove stored sessions",
	}
	var cwd string
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List stored sessions, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := storeFromFlags(cmd.Context(), g)
			if err != nil {
				return err
			}
			if cwd != "" {
				if cwd, err = filepath.Abs(cwd); err != nil {
					return err
				}
			}
			metas, err := store.List(session.Filter{Cwd: cwd})
			if err != nil {
				return err
			}
			return printList(cmd.OutOrStdout(), asJSON, metas, "no sessions", "ID\tUPDATED\tCWD\tTITLE", func(m session.Meta) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s", m.ID, m.UpdatedAt.Local().Format(time.DateTime), m.Cwd, m.Title)
			})
		},
	}
	list.Flags().StringVar(&cwd, "cwd", "", "only sessions whose working directory is this one")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session's conversation",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := storeFromFlags(cmd.Context(), g)
			if err != nil {
				return err
			}
			meta, err := store.Get(args[0])
			if err != nil {
				return err
			}
			recs, err := store.Records(args[0])
			if err != nil {
				return err
			}
			return printSession(cmd.OutOrStdout(), meta, session.Live(recs))
		},
	}
	rm := &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove stored sessions (refused while a session is open in an acpd process)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := storeFromFlags(cmd.Context(), g)
			if err != nil {
				return err
			}
			return removeEach(cmd, args, store.Delete)
		},
	}
	cmd.AddCommand(list, show, rm)
	return cmd
}

func storeFromFlags(ctx context.Context, g *globalFlags) (*session.Store, error) {
	loader, err := loadConfigOrDefaults(g)
	if err != nil {
		return nil, err
	}
	if uerr := loader.UserError(); uerr != nil {
		fmt.Fprintln(os.Stderr, "acpd: warning: user configuration ignored:", uerr)
	}
	return openStore(ctx, loader.User())
}

// printSession renders the model-facing transcript for people.
func printSession(w io.Writer, meta session.Meta, recs []session.Record) error {
	fmt.Fprintf(w, "session %s\ncwd     %s\ntitle   %s\ncreated %s\nupdated %s\n\n", meta.ID, meta.Cwd, meta.Title,
		meta.CreatedAt.Local().Format(time.DateTime), meta.UpdatedAt.Local().Format(time.DateTime))
	for _, r := range recs {
		if r.Kind != "message" {
			continue
		}
		var m model.Message
		if err := json.Unmarshal(r.Data, &m); err != nil {
			fmt.Fprintf(w, "[record %d: %v]\n", r.Seq, err)
			continue
		}
		for _, p := range m.Parts {
			switch p.Type {
			case model.PartText:
				fmt.Fprintf(w, "%s: %s\n", m.Role, p.Text)
			case model.PartReasoning:
				if p.Text != "" {
					fmt.Fprintf(w, "%s (thinking): %s\n", m.Role, p.Text)
				}
			case model.PartToolUse:
				fmt.Fprintf(w, "%s → %s %s\n", m.Role, p.ToolName, p.Input)
			case model.PartToolResult:
				for _, c := range p.Content {
					if c.Type == model.PartText {
						fmt.Fprintf(w, "  ← %s\n", firstLine(c.Text))
					}
				}
			case model.PartImage:
				fmt.Fprintf(w, "%s: [image %s]\n", m.Role, p.MimeType)
			}
		}
	}
	return nil
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i] + " …"
		}
	}
	return s
}

// removeEach removes every id with remove, reporting each outcome; it exits
// 1 when any removal failed, after trying them all.
func removeEach(cmd *cobra.Command, ids []string, remove func(id string) error) error {
	failed := false
	for _, id := range ids {
		if err := remove(id); err != nil {
			msg := err.Error()
			switch {
			case errors.Is(err, session.ErrNotFound):
				msg = "no session " + id + " (acpd sessions list shows the stored ones)"
			case !strings.Contains(msg, id):
				msg = id + ": " + msg
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "acpd:", msg)
			failed = true
			continue
		}
		fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", id)
	}
	if failed {
		return exitError(1)
	}
	return nil
}
