package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// `servers create|edit|delete`: server files written by the running proxy
// (POST, PUT, DELETE /api/v1/servers), checked as config check checks them.
func serverFileCmds(conn *adminConn, g *globalFlags, output *string) []*cobra.Command {
	var file, mode string
	var domains, addresses []string
	keysFrom := func(cmd *cobra.Command) (map[string]any, error) {
		keys := map[string]any{}
		if file != "" {
			data, err := os.ReadFile(file)
			if err != nil {
				return nil, err
			}
			if err := toml.Unmarshal(data, &keys); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
		}
		if len(domains) > 0 {
			keys["domains"] = domains
		}
		if len(addresses) > 0 {
			keys["addresses"] = addresses
		}
		if mode != "" {
			keys["proxy_mode"] = mode
		}
		if len(keys) == 0 {
			return nil, errors.New("give the server's keys: --file SERVER.toml, or --domain and --address")
		}
		return keys, nil
	}
	printFile := func(cmd *cobra.Command, verb string, sf admin.ServerFile) error {
		if *output == "json" {
			return printJSON(cmd.OutOrStdout(), sf)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s (%s); the servers were reloaded\n", verb, sf.ID, sf.File)
		return nil
	}
	// writeRun writes the keys given through write and says what it did.
	writeRun := func(verb string, write func(*admin.Client, context.Context, string, map[string]any) (admin.ServerFile, error)) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			keys, err := keysFrom(cmd)
			if err != nil {
				return err
			}
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			sf, err := write(c, cmd.Context(), args[0], keys)
			if err != nil {
				return err
			}
			return printFile(cmd, verb, sf)
		}
	}
	addKeyFlags := func(c *cobra.Command) {
		f := c.Flags()
		f.StringVar(&file, "file", "", "a server file (TOML, as in servers_dir) whose keys to write")
		f.StringSliceVar(&domains, "domain", nil, "a domain players type (repeat for more)")
		f.StringSliceVar(&addresses, "address", nil, "a backend address host:port (repeat for more)")
		f.StringVar(&mode, "proxy-mode", "", "passthrough, zero_copy, server_only, offline or client_only")
	}
	create := &cobra.Command{
		Use:   "create ID [--file SERVER.toml | --domain D --address A [--proxy-mode M]]",
		Short: "Write a new server file in the running proxy's servers_dir, and route it at once",
		Long: `Has the running proxy write <servers_dir>/ID.toml from the keys given (a file's, and the
flags over them), after the checks of 'infrarust config check': a file that fails them is
not written and each error is named with its key. The servers are reloaded as after an
edit by hand; players stay connected.`,
		Example: `  infrarust servers create games --domain games.example.net --address 10.0.0.7:25565
  infrarust servers create survival --file survival.toml`,
		Args: exactArgs(1),
		RunE: writeRun("created", (*admin.Client).CreateServer),
	}
	addKeyFlags(create)
	edit := &cobra.Command{
		Use:   "edit ID --file SERVER.toml",
		Short: "Replace a server file of the running proxy's servers_dir",
		Long: `Replaces <servers_dir>/ID.toml with the keys given, after the checks of 'infrarust
config check'; a file that fails them leaves the previous one as it was.`,
		Example: `  infrarust servers edit games --file games.toml`,
		Args:    exactArgs(1),
		RunE:    writeRun("replaced", (*admin.Client).EditServer),
	}
	addKeyFlags(edit)
	del := &cobra.Command{
		Use:     "delete ID",
		Short:   "Remove a server file from the running proxy's servers_dir",
		Long:    `Removes <servers_dir>/ID.toml and reloads the servers, as after a removal by hand.`,
		Example: `  infrarust servers delete games`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.client(cmd, g)
			if err != nil {
				return err
			}
			if err := c.DeleteServer(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %s; the servers were reloaded\n", args[0])
			return nil
		},
	}
	return []*cobra.Command{create, edit, del}
}
