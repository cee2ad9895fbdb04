import { CliError, EXIT } from '../errors.js';
import { paint, renderTable } from '../output.js';
import type { CommandContext } from '../run-context.js';
import { baseUrlOf, tokenFor } from '../session.js';

export async function run(ctx: CommandContext): Promise<number> {
  const { config, context } = ctx.resolved();
  const mode = ctx.command.path[1] ?? 'configs';
  if (mode === 'current-context') {
    ctx.out.stdout.write(`${context.name}\n`);
    return 0;
  }
  if (mode === 'user-token') {
    const token = tokenFor(context.name, ctx.env);
    if (!token) throw new CliError(`no token for context '${context.name}': run 'svc login' or set SVC_TOKEN`, EXIT.general);
    ctx.out.stdout.write(`${token}\n`);
    return 0;
  }
  const rows = config.contexts.map((c) => [
    c.name === context.name ? paint('*', 'green', ctx.out.color) : '',
    c.name,
    baseUrlOf(c),
    tokenFor(c.name, { ...ctx.env, SVC_TOKEN: undefined }) ? 'yes' : 'no',
  ]);
  ctx.out.stdout.write(renderTable(['Current', 'Name', 'Address', 'Logged in'], rows));
  return 0;
}
