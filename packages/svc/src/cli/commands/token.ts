import { enc } from '../client.js';
import { parseTokenDuration, tokenStatus } from '../duration.js';
import { CliError } from '../errors.js';
import { formatTime, json, paint, records, renderTable, statusColor, strings, text, type ApiRecord } from '../output.js';
import { ask, isInteractive } from '../prompt.js';
import { arg, flagBool, flagList, flagString, wantsJson, type CommandContext } from '../run-context.js';

function summary(token: ApiRecord): string {
  const namespaces = strings(token, 'namespaces');
  return [
    `id:         ${text(token, 'id')}`,
    `name:       ${text(token, 'name')}`,
    `prefix:     ${text(token, 'token_prefix')}`,
    `scopes:     ${strings(token, 'scopes').join(', ')}`,
    `namespaces: ${namespaces.length > 0 ? namespaces.join(', ') : 'all'}`,
    `expires:    ${token.expire_at ? formatTime(token.expire_at) + ' UTC' : 'never'}`,
    'The token is shown once, on stdout: store it now.',
  ].join('\n');
}

/** Clear token on stdout (pipe-friendly), everything else on stderr. */
function printIssued(ctx: CommandContext, issued: unknown): number {
  const token = records([issued])[0];
  if (!token || typeof token.token !== 'string') throw new CliError('token: the server returned no token');
  ctx.out.stdout.write(`${token.token}\n`);
  ctx.out.stderr.write(`${summary(token)}\n`);
  return 0;
}

export async function run(ctx: CommandContext): Promise<number> {
  const client = ctx.client();
  switch (ctx.command.path[1]) {
    case 'create': {
      const name = arg(ctx, 'NAME');
      const scopes = flagList(ctx, 'scope');
      if (scopes.length === 0) throw new CliError(`'token create' needs at least one -s/--scope`);
      const body: Record<string, unknown> = { name, scopes, namespaces: flagList(ctx, 'namespace') };
      const expire = flagString(ctx, 'expire');
      if (expire !== undefined) {
        const ms = parseTokenDuration(expire);
        if (ms === null) throw new CliError(`invalid duration '${expire}': use a number followed by d, h or m (30d, 12h, 90m)`);
        body.expire_at = new Date(Date.now() + ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
      }
      return printIssued(ctx, await client.call('POST', '/tokens', { body, target: { kind: 'token', name } }));
    }
    case 'list': {
      const list = records(await client.get('/tokens', { target: { kind: 'tokens', name: '*', list: true } }));
      if (wantsJson(ctx)) ctx.out.stdout.write(json(list));
      else {
        const now = new Date();
        const rows = list.map((t) => {
          const status = tokenStatus(t, now);
          const ns = strings(t, 'namespaces');
          return [
            text(t, 'id'),
            text(t, 'name'),
            text(t, 'token_prefix'),
            strings(t, 'scopes').join(','),
            ns.length > 0 ? ns.join(',') : '*',
            formatTime(t.created_at),
            formatTime(t.expire_at),
            formatTime(t.last_used_at),
            paint(status, statusColor(status), ctx.out.color),
          ];
        });
        ctx.out.stdout.write(renderTable(['Id', 'Name', 'Prefix', 'Scopes', 'Namespaces', 'Created at (UTC)', 'Expires (UTC)', 'Last used (UTC)', 'Status'], rows));
      }
      return 0;
    }
    case 'revoke': {
      const id = arg(ctx, 'ID');
      if (!flagBool(ctx, 'yes')) {
        if (!isInteractive(ctx.stdin)) {
          throw new CliError(`refusing to revoke token '${id}' without confirmation: stdin is not a terminal (pass --yes)`);
        }
        // Load it first: an unknown id fails (exit 4) before asking, and the question can name the token.
        const token = records([await client.get(`/tokens/${enc(id)}`, { target: { kind: 'token', name: id } })])[0] ?? {};
        const answer = await ask(ctx.stdin, process.stderr, `Revoke token '${text(token, 'name', id)}' (${id})? Programs using it will get 401. [y/N] `);
        if (!/^y(es)?$/i.test(answer)) {
          ctx.out.stderr.write('aborted: nothing revoked\n');
          return 1;
        }
      }
      await client.call('DELETE', `/tokens/${enc(id)}`, { target: { kind: 'token', name: id } });
      ctx.out.stderr.write(`revoked token ${id}\n`);
      return 0;
    }
    case 'rotate': {
      const id = arg(ctx, 'ID');
      return printIssued(ctx, await client.call('POST', `/tokens/${enc(id)}/rotate`, { target: { kind: 'token', name: id } }));
    }
  }
  throw new CliError('unknown command');
}
