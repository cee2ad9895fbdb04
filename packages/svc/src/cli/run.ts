// The client core: parse, dispatch to the command's lazily loaded module, and turn failures into the one
// `error:` line and the exit code. Imported by main.ts for everything except `--version`.
import { parseArgv, UsageError } from './args.js';
import type { CommandModule } from './command-table.js';
import { CliError, errorText } from './errors.js';
import { colorAllowed } from './output.js';
import { createContext, type Handler } from './run-context.js';

export async function main(args: string[], version: () => string): Promise<number> {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    // `svc ... | head` closes the pipe early: that is not a failure of the command.
    if (error.code === 'EPIPE') process.exit(0);
  });
  const out = {
    stdout: process.stdout,
    stderr: process.stderr,
    color: colorAllowed(process.stdout, process.env),
    colorErr: colorAllowed(process.stderr, process.env),
  };
  const fail = (message: string, details: readonly string[] = []) => {
    process.stderr.write(errorText(message, details));
  };
  try {
    const parsed = parseArgv(args);
    if (parsed.kind === 'version') {
      process.stdout.write(`svc ${version()}\n`);
      return 0;
    }
    if (parsed.kind === 'help') {
      const { helpText } = await import('./help.js');
      process.stdout.write(helpText(parsed.topic));
      return 0;
    }
    const ctx = createContext({ ...parsed, env: process.env, out }, () => process.stdin);
    const module = await loadModule(parsed.command.module);
    return await module.run(ctx);
  } catch (error) {
    if (error instanceof UsageError) {
      fail(error.message, [`Run 'svc ${error.helpTopic.length > 0 ? `${error.helpTopic.join(' ')} ` : ''}--help' for usage.`]);
      return 1;
    }
    if (error instanceof CliError) {
      fail(error.message, error.details);
      return error.exitCode;
    }
    fail(error instanceof Error ? error.message : String(error));
    return 1;
  }
}

function loadModule(name: CommandModule): Promise<{ run: Handler }> {
  switch (name) {
    case 'init':
      return import('./commands/init.js');
    case 'doctor':
      return import('./commands/doctor.js');
    case 'completions':
      return import('./commands/completions.js');
    case 'server':
      return import('./commands/server.js');
    case 'session':
      return import('./commands/session.js');
    case 'apply':
      return import('./commands/apply.js');
    case 'deployment':
      return import('./commands/deployment.js');
    case 'user':
      return import('./commands/user.js');
    case 'token':
      return import('./commands/token.js');
    case 'webhook':
      return import('./commands/webhook.js');
    case 'secret':
      return import('./commands/secret.js');
    case 'config':
      return import('./commands/config.js');
    case 'namespace':
      return import('./commands/namespace.js');
    case 'node':
      return import('./commands/node.js');
    case 'context':
      return import('./commands/context.js');
  }
}
