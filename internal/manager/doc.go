// Package manager starts a sleeping Minecraft server when a player logs in and
// stops it again when nobody has played on it for a while.
//
// A server with a [server_manager] block is "managed". Its state is one of
// online, offline, sleeping, starting, stopping or crashed:
//
//   - sleeping: down, and a login wakes it (the state after an idle or operator stop).
//   - offline: not known yet (before the first poll of a panel) or the provider
//     cannot be reached; a login still tries to start it.
//   - starting: a start was requested; the server is online once its provider
//     says it runs AND a status ping to its first address answers (a server
//     without addresses is trusted on the provider's word). For type "local" with
//     a ready_pattern, the pattern must also have matched a line of its output.
//   - online: ready for players.
//   - stopping: a stop was requested (idle, operator, reload or proxy exit).
//   - crashed: the process exited, or the start failed, without a stop being
//     asked for; the reason is kept and shown. A login tries to start it again.
//
// Only a login starts a server: the proxy calls EnsureStarted after every check
// (ban, rate limit, routing) passed, so a refused player never wakes anything,
// and a status ping only reads State. Concurrent logins share one start.
//
// Login wait and the client's timeout: EnsureStarted waits up to start_timeout.
// The vanilla client gives up on a login after about 30 s, and the login phase
// has no keep-alive packet the proxy could send to hold it open, so with a
// start_timeout above ~25 s a player may see a client-side "Timed out" instead of
// the proxy's "Server is starting, please reconnect in a moment". Either way the
// start goes on in the background and the player's next attempt lands once the
// server is online. A server still not ready after start_timeout stays in
// "starting" (big modded servers take minutes) and keeps being polled.
//
// Idle stop: once a server is online with zero players for shutdown_after (unset
// means never), it is stopped. A player who arrives while it is stopping waits
// for the stop to finish and then starts it again.
//
// Providers: "local" runs command/args in working_dir with env added to the
// proxy's environment, in its own process group; stdout and stderr lines go to
// the proxy's log with the server id. It stops by writing "stop" to stdin, sends
// SIGTERM to the process group at half of shutdown_timeout and SIGKILL at
// shutdown_timeout. "pterodactyl" drives a panel's client API (power signals and
// the resources endpoint), escalating to the "kill" signal after shutdown_timeout.
// "crafty" does the same through Crafty Controller's API v2 (start_server,
// stop_server, kill_server, stats). "docker" starts (or unpauses) a container and
// stops it with `docker stop` (shutdown_timeout as its grace) through the Engine
// API; "kubernetes" scales a StatefulSet or Deployment to replicas and back to 0,
// and is online once a pod is ready (docker.go, kubernetes.go, crafty.go).
//
// Proxy exit (Shutdown, after the proxy's own Shutdown): local child processes
// are stopped cleanly, because they are ours and would otherwise be orphaned
// holding the port, each with its own grace (stop command, shutdown_timeout,
// signals) however long the proxy's sessions took; panel servers are left as they
// are, so a proxy restart does not take them down, and the next proxy finds them
// running. Containers and workloads are treated like panel servers.
//
// Where things live: state.go (the State type and its transition table),
// wait.go (the one wait behind EnsureStarted, Start and Stop), loops.go (Run,
// polls, the start and stop loops), shutdown.go, options.go (Options, Clock, the
// defaults), errors.go (what a player reads), provider.go (the Provider interface
// and the optional interfaces a provider may add), then one file per provider.
package manager
