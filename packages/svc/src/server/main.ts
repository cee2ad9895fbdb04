// `svc server start`: validates the environment before binding, opens and migrates the database, seeds the
// first administrator, serves the API and stops gracefully on SIGTERM.
export interface ServerStartOptions {
  /** `--config` of the CLI; otherwise SVC_CONFIG_FILE or the config directory's config.toml. */
  configPath?: string;
  /** `--context` of the CLI. */
  context?: string;
}

/** Runs until SIGTERM/SIGINT; resolves after a graceful stop. Exits the process non-zero on start-up errors. */
export async function runServer(_options: ServerStartOptions): Promise<void> {
  throw new Error('not implemented yet');
}
