// Starts the server without the CLI: `node --import tsx packages/svc/src/server/standalone.ts [--config F] [--context C]`.
// Used by tests and scripts; `svc server start` does the same through the CLI.
import { runServer, type ServerStartOptions } from './main.js';

function parseArgs(argv: readonly string[]): ServerStartOptions {
  const options: ServerStartOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if ((arg === '--config' || arg === '--context' || arg === '-c') && value !== undefined) {
      if (arg === '--config') options.configPath = value;
      else options.context = value;
      i++;
    } else {
      process.stderr.write(`error: unknown argument '${arg}' (usage: standalone.ts [--config FILE] [--context NAME])\n`);
      process.exit(1);
    }
  }
  return options;
}

await runServer(parseArgs(process.argv.slice(2)));
process.exit(0);
