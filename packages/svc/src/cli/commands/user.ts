import { enc } from '../client.js';
import { CliError } from '../errors.js';
import { formatTime, json, records, renderTable, text } from '../output.js';
import { arg, flagString, wantsJson, type CommandContext } from '../run-context.js';

export async function run(ctx: CommandContext): Promise<number> {
  const client = ctx.client();
  switch (ctx.command.path[1]) {
    case 'list': {
      const list = records(await client.get('/users', { target: { kind: 'users', name: '*', list: true } }));
      if (wantsJson(ctx)) ctx.out.stdout.write(json(list));
      else ctx.out.stdout.write(renderTable(['Id', 'Username', 'Created at (UTC)'], list.map((u) => [text(u, 'id'), text(u, 'username'), formatTime(u.created_at)])));
      return 0;
    }
    case 'create': {
      const username = flagString(ctx, 'username');
      const password = flagString(ctx, 'password');
      if (username === undefined || password === undefined) throw new CliError(`'user create' needs --username and --password`);
      const created = await client.call('POST', '/users', { body: { username, password }, target: { kind: 'user', name: username } });
      ctx.out.stdout.write(`${text(records([created])[0] ?? {}, 'id', username)}\n`);
      return 0;
    }
    case 'update': {
      const username = flagString(ctx, 'username');
      const password = flagString(ctx, 'password');
      if (username === undefined && password === undefined) throw new CliError(`'user update' needs --username and/or --password`);
      // Only the current user can be updated: find out who that is from the token.
      const me = records([await client.get('/users/me', { target: { kind: 'user', name: 'me' } })])[0];
      const id = me ? text(me, 'id', '') : '';
      if (id === '') throw new CliError('user: the server did not return the current user');
      const body = { ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}) };
      await client.call('PUT', `/users/${enc(id)}`, { body, target: { kind: 'user', name: me ? text(me, 'username', id) : id } });
      ctx.out.stdout.write(`${id}\n`);
      return 0;
    }
    case 'delete': {
      const id = arg(ctx, 'ID');
      await client.call('DELETE', `/users/${enc(id)}`, { target: { kind: 'user', name: id } });
      ctx.out.stdout.write(`${id}\n`);
      return 0;
    }
  }
  throw new CliError('unknown command');
}
