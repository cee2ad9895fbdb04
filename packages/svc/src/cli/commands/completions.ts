import { completionScript, SHELLS, type Shell } from '../completions.js';
import { CliError } from '../errors.js';
import { arg, type CommandContext } from '../run-context.js';

const isShell = (value: string): value is Shell => (SHELLS as readonly string[]).includes(value);

export async function run(ctx: CommandContext): Promise<number> {
  const shell = arg(ctx, 'SHELL');
  if (!isShell(shell)) throw new CliError(`unknown shell '${shell}' (known: ${SHELLS.join(', ')})`);
  ctx.out.stdout.write(completionScript(shell));
  return 0;
}
