import { enc } from '../client.js';
import { CliError } from '../errors.js';
import { json, records, renderTable, text } from '../output.js';
import { arg, flagString, wantsJson, type CommandContext } from '../run-context.js';

export async function run(ctx: CommandContext): Promise<number> {
  const client = ctx.client();
  switch (ctx.command.path[1]) {
    case 'list': {
      const namespace = flagString(ctx, 'namespace');
      const list = records(await client.get('/configs', { query: { namespace }, target: { kind: 'configs', name: '*', list: true, namespace } }))
        // The configs listing has no documented namespace filter: filter here as well.
        .filter((c) => namespace === undefined || text(c, 'namespace', '') === namespace);
      if (wantsJson(ctx)) ctx.out.stdout.write(json(list));
      else {
        const rows = list.map((c) => [text(c, 'id'), text(c, 'namespace'), text(c, 'name'), `${Buffer.byteLength(text(c, 'data', ''))} B`]);
        ctx.out.stdout.write(renderTable(['Id', 'Namespace', 'Name', 'Size'], rows));
      }
      return 0;
    }
    case 'inspect': {
      const id = arg(ctx, 'ID');
      ctx.out.stdout.write(json(await client.get(`/configs/${enc(id)}`, { target: { kind: 'config', name: id } })));
      return 0;
    }
    case 'delete': {
      const id = arg(ctx, 'ID');
      await client.call('DELETE', `/configs/${enc(id)}`, { target: { kind: 'config', name: id } });
      ctx.out.stdout.write(`${id}\n`);
      return 0;
    }
  }
  throw new CliError('unknown command');
}
