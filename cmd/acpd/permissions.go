package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"acpd/permissions"
)

// permissionsFile is where remembered permission choices live, inside the
// state directory.
const permissionsFile = "permissions.json"

func newPermissionsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "permissions",
		Short: "List and remove remembered permission choices (\"always allow\" / \"always reject\")",
	}
	var project string
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List remembered choices",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, err := permissionsStore(cmd.Context(), g)
			if err != nil {
				return err
			}
			all, err := ps.List()
			if err != nil {
				return err
			}
			if project != "" {
				abs, err := filepath.Abs(project)
				if err != nil {
					return err
				}
				key := permissions.ProjectKey(abs)
				kept := all[:0]
				for _, r := range all {
					if r.Project == key {
						kept = append(kept, r)
					}
				}
				all = kept
			}
			return printList(cmd.OutOrStdout(), asJSON, all, "no remembered choices", "ID\tPROJECT\tRULE\tSINCE", func(r permissions.Remembered) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s", r.ID, r.Project, r.Rule.String(), r.CreatedAt.Local().Format(time.DateTime))
			})
		},
	}
	list.Flags().StringVar(&project, "project", "", "only choices for the project containing this directory")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	rm := &cobra.Command{
		Use:   "rm ID...",
		Short: "Forget remembered choices",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, err := permissionsStore(cmd.Context(), g)
			if err != nil {
				return err
			}
			return removeEach(cmd, args, ps.Remove)
		},
	}
	cmd.AddCommand(list, rm)
	return cmd
}

func permissionsStore(ctx context.Context, g *globalFlags) (*permissions.Store, error) {
	store, err := storeFromFlags(ctx, g)
	if err != nil {
		return nil, err
	}
	return permissions.OpenStore(filepath.Join(store.Dir(), permissionsFile))
}
