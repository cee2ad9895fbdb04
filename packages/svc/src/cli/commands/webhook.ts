import { enc } from '../client.js';
import { CliError } from '../errors.js';
import { formatTime, json, paint, records, renderTable, statusColor, strings, text } from '../output.js';
import { arg, flagList, flagString, wantsJson, type CommandContext } from '../run-context.js';

export async function run(ctx: CommandContext): Promise<number> {
  const client = ctx.client();
  switch (ctx.command.path[1]) {
    case 'create': {
      const url = arg(ctx, 'URL');
      const secret = flagString(ctx, 'secret');
      const created = records([
        await client.call('POST', '/webhooks', {
          body: { url, events: flagList(ctx, 'event'), ...(secret !== undefined ? { secret } : {}) },
          target: { kind: 'webhook', name: url },
        }),
      ])[0];
      if (!created) throw new CliError('webhook: unexpected response from the server');
      ctx.out.stdout.write(`${text(created, 'id')}\n`);
      // The generated secret exists only in this response: show it once, on stderr, never the one the user chose.
      if (secret === undefined && typeof created.secret === 'string') {
        ctx.out.stderr.write(`secret: ${created.secret}\n(shown once: store it now to verify X-Svc-Signature)\n`);
      }
      return 0;
    }
    case 'list': {
      const list = records(await client.get('/webhooks', { target: { kind: 'webhooks', name: '*', list: true } }));
      if (wantsJson(ctx)) ctx.out.stdout.write(json(list));
      else {
        const rows = list.map((w) => {
          const state = w.revoked_at ? 'revoked' : 'active';
          const events = strings(w, 'events');
          return [text(w, 'id'), text(w, 'url'), events.length > 0 ? events.join(',') : '*', formatTime(w.created_at), paint(state, statusColor(state), ctx.out.color)];
        });
        ctx.out.stdout.write(renderTable(['Id', 'Url', 'Events', 'Created at (UTC)', 'Status'], rows));
      }
      return 0;
    }
    case 'delete': {
      const id = arg(ctx, 'ID');
      await client.call('DELETE', `/webhooks/${enc(id)}`, { target: { kind: 'webhook', name: id } });
      ctx.out.stdout.write(`${id}\n`);
      return 0;
    }
  }
  throw new CliError('unknown command');
}
