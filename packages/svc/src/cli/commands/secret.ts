import { enc } from '../client.js';
import { CliError } from '../errors.js';
import { formatTime, json, records, renderTable, text } from '../output.js';
import { readStdin } from '../read-stdin.js';
import { arg, flagBool, flagString, wantsJson, type CommandContext } from '../run-context.js';

export async function run(ctx: CommandContext): Promise<number> {
  const client = ctx.client();
  switch (ctx.command.path[1]) {
    case 'create': {
      const name = arg(ctx, 'NAME');
      const namespace = flagString(ctx, 'namespace');
      let value = flagString(ctx, 'value');
      if (namespace === undefined) throw new CliError(`'secret create' needs -n/--namespace`);
      if (value === undefined) throw new CliError(`'secret create' needs -v/--value (use - to read it from stdin)`);
      // Reading from stdin keeps the value out of the shell history and the process list.
      if (value === '-') value = (await readStdin(ctx.stdin)).replace(/\r?\n$/, '');
      const created = await client.call('POST', '/secrets', {
        body: { namespace, name, value },
        target: { kind: 'secret', name: `${namespace}/${name}` },
      });
      ctx.out.stdout.write(`${text(records([created])[0] ?? {}, 'id', name)}\n`);
      return 0;
    }
    case 'list': {
      const namespace = flagString(ctx, 'namespace');
      const list = records(await client.get('/secrets', { query: { namespace }, target: { kind: 'secrets', name: '*', list: true, namespace } }));
      if (wantsJson(ctx)) ctx.out.stdout.write(json(list));
      else {
        const rows = list.map((s) => [text(s, 'id'), text(s, 'namespace'), text(s, 'name'), formatTime(s.created_at), formatTime(s.updated_at)]);
        ctx.out.stdout.write(renderTable(['Id', 'Namespace', 'Name', 'Created at (UTC)', 'Updated at (UTC)'], rows));
      }
      return 0;
    }
    case 'delete': {
      const id = arg(ctx, 'ID');
      // Without --force the server refuses a referenced secret (409) and names the referrers, which the
      // error output lists before aborting.
      await client.call('DELETE', `/secrets/${enc(id)}`, {
        query: flagBool(ctx, 'force') ? { force: true } : undefined,
        target: { kind: 'secret', name: id },
      });
      ctx.out.stdout.write(`${id}\n`);
      return 0;
    }
  }
  throw new CliError('unknown command');
}
