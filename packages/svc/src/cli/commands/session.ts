import { CliError } from '../errors.js';
import { askHidden, ask, isInteractive } from '../prompt.js';
import { flagString, type CommandContext } from '../run-context.js';
import { removeToken, saveToken, tokenFor } from '../session.js';
import { ApiClient } from '../client.js';
import { isRecord } from '../output.js';

export async function run(ctx: CommandContext): Promise<number> {
  return ctx.command.path[0] === 'login' ? login(ctx) : logout(ctx);
}

async function login(ctx: CommandContext): Promise<number> {
  const { context, baseUrl } = ctx.resolved();
  let username = flagString(ctx, 'username');
  let password = flagString(ctx, 'password');
  if ((username === undefined || password === undefined) && isInteractive(ctx.stdin)) {
    username ??= await ask(ctx.stdin, process.stderr, 'Username: ');
    password ??= await askHidden(ctx.stdin, process.stderr, 'Password: ');
  }
  if (username === undefined || password === undefined) throw new CliError(`'login' needs -u/--username and -p/--password`);
  // Login never sends a stored token: it mints a fresh session.
  const client = new ApiClient(baseUrl, undefined);
  const answer = await client.call('POST', '/login', { body: { username, password }, target: { kind: 'user', name: username } });
  if (!isRecord(answer) || typeof answer.token !== 'string') throw new CliError('login: the server returned no token');
  const path = saveToken(context.name, answer.token, ctx.env);
  ctx.out.stderr.write(`logged in to ${baseUrl} as ${username} (context '${context.name}', token saved in ${path})\n`);
  return 0;
}

async function logout(ctx: CommandContext): Promise<number> {
  const { context, baseUrl } = ctx.resolved();
  const stored = tokenFor(context.name, { ...ctx.env, SVC_TOKEN: undefined });
  if (stored) {
    // Best effort: the local token goes away even if the server cannot be reached.
    try {
      await new ApiClient(baseUrl, stored).raw('POST', '/logout', { timeoutMs: 5000 });
    } catch {
      ctx.out.stderr.write(`warning: could not reach ${baseUrl} to revoke the session; removing the local token anyway\n`);
    }
  }
  removeToken(context.name, ctx.env);
  ctx.out.stderr.write(stored ? `logged out of context '${context.name}'\n` : `no stored token for context '${context.name}'\n`);
  return 0;
}
