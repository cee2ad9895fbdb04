import { enc, type ApiClient, type Query } from '../client.js';
import { filterDeployments, LIST_HEADERS, listRow, parseLabelSelector } from '../deployments-view.js';
import { CliError, EXIT } from '../errors.js';
import { formatTime, json, num, paint, records, renderTable, statusColor, sub, text, type ApiRecord } from '../output.js';
import { arg, flagBool, flagInt, flagList, flagString, wantsJson, type CommandContext } from '../run-context.js';

const FOLLOW_POLL_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(ctx: CommandContext): Promise<number> {
  switch (ctx.command.path[1]) {
    case 'list':
      return list(ctx);
    case 'inspect': {
      const id = arg(ctx, 'ID');
      ctx.out.stdout.write(json(await ctx.client().get(`/deployments/${enc(id)}`, { target: { kind: 'deployment', name: id } })));
      return 0;
    }
    case 'delete': {
      const id = arg(ctx, 'ID');
      await ctx.client().call('DELETE', `/deployments/${enc(id)}`, { target: { kind: 'deployment', name: id } });
      ctx.out.stdout.write(`${id}\n`);
      return 0;
    }
    case 'logs':
      return logs(ctx);
    case 'exec': {
      const { execCommand } = await import('../exec.js');
      return execCommand(ctx);
    }
    case 'events':
      return events(ctx);
    case 'metrics':
      return metrics(ctx);
    case 'health-checks':
      return healthChecks(ctx);
  }
  throw new CliError('unknown command');
}

async function list(ctx: CommandContext): Promise<number> {
  const namespace = flagString(ctx, 'namespace');
  const statuses = flagList(ctx, 'status');
  const kind = flagString(ctx, 'type');
  const labels = flagList(ctx, 'label').map(parseLabelSelector);
  const all = records(
    await ctx.client().get('/deployments', {
      query: { namespace, status: statuses.length > 0 ? statuses : undefined, kind },
      target: { kind: 'deployments', name: namespace ?? '*', list: true, namespace },
    }),
  );
  const shown = filterDeployments(all, { namespace, statuses, kind, labels });
  if (wantsJson(ctx)) ctx.out.stdout.write(json(shown));
  else ctx.out.stdout.write(renderTable(LIST_HEADERS, shown.map((d) => listRow(d, ctx.out.color))));
  return 0;
}

/**
 * Follow modes: the first request must succeed (its error is the command's error); afterwards transient
 * failures (unreachable server, 5xx, even 404 while a deployment is being replaced) are reported once and
 * polling continues until the user interrupts.
 */
async function follow(ctx: CommandContext, poll: () => Promise<void>): Promise<never> {
  let failing = false;
  for (;;) {
    await sleep(FOLLOW_POLL_MS);
    try {
      await poll();
      if (failing) ctx.out.stderr.write('info: reconnected\n');
      failing = false;
    } catch (error) {
      if (!failing) ctx.out.stderr.write(`warning: ${error instanceof Error ? error.message : String(error)}; retrying every ${FOLLOW_POLL_MS / 1000} s\n`);
      failing = true;
    }
  }
}

function logLine(entry: ApiRecord): string {
  return `${text(entry, 'instance')} | ${text(entry, 'message', '')}\n`;
}

async function logs(ctx: CommandContext): Promise<number> {
  const id = arg(ctx, 'ID');
  const client = ctx.client();
  const target = { kind: 'deployment', name: id };
  const tail = flagInt(ctx, 'tail') ?? 100;
  const container = flagString(ctx, 'container');
  const fetch = (query: Query) => client.get(`/deployments/${enc(id)}/logs`, { query: { ...query, container }, target, timeoutMs: 15_000 });
  const first = records(await fetch({ tail, since: flagString(ctx, 'since') }));
  for (const entry of first) ctx.out.stdout.write(logLine(entry));
  if (!flagBool(ctx, 'follow')) return 0;

  // Poll from the newest timestamp seen; lines at exactly that timestamp are de-duplicated by content.
  let lastTs = '';
  let seenAtLast = new Set<string>();
  const remember = (entries: ApiRecord[]) => {
    for (const entry of entries) {
      const ts = text(entry, 'timestamp', '');
      const key = `${text(entry, 'instance', '')}\u0000${text(entry, 'message', '')}`;
      const cmp = compareTs(ts, lastTs);
      if (lastTs !== '' && (cmp < 0 || (cmp === 0 && seenAtLast.has(key)))) continue;
      if (cmp > 0 || lastTs === '') {
        lastTs = ts;
        seenAtLast = new Set();
      }
      seenAtLast.add(key);
      if (entries !== first) ctx.out.stdout.write(logLine(entry));
    }
  };
  remember(first);
  return follow(ctx, async () => {
    remember(records(await fetch(lastTs ? { since: lastTs, tail: 10_000 } : { tail })));
  });
}

function compareTs(a: string, b: string): number {
  const x = Date.parse(a);
  const y = Date.parse(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return a === b ? 0 : a < b ? -1 : 1;
  return x === y ? (a === b ? 0 : a < b ? -1 : 1) : x < y ? -1 : 1;
}

function eventLine(event: ApiRecord, color: boolean): string {
  const level = text(event, 'level');
  const paintedLevel = paint(level.padEnd(7), level === 'error' ? 'red' : level === 'warning' ? 'yellow' : 'dim', color);
  return `${formatTime(event.timestamp)}  ${paintedLevel}  ${text(event, 'component')}  ${text(event, 'reason')}  ${text(event, 'message', '')}\n`;
}

async function events(ctx: CommandContext): Promise<number> {
  const id = arg(ctx, 'ID');
  const client = ctx.client();
  const query = { level: flagString(ctx, 'level'), limit: flagInt(ctx, 'limit', 1) ?? 50 };
  const fetch = async () =>
    records(await client.get(`/deployments/${enc(id)}/events`, { query, target: { kind: 'deployment', name: id } })).sort((a, b) =>
      text(a, 'timestamp', '').localeCompare(text(b, 'timestamp', '')),
    );
  const first = await fetch();
  if (wantsJson(ctx) && !flagBool(ctx, 'follow')) {
    ctx.out.stdout.write(json(first));
    return 0;
  }
  const seen = new Set<string>();
  const print = (list: ApiRecord[]) => {
    for (const event of list) {
      const key = text(event, 'id', JSON.stringify(event));
      if (seen.has(key)) continue;
      seen.add(key);
      ctx.out.stdout.write(wantsJson(ctx) ? `${JSON.stringify(event)}\n` : eventLine(event, ctx.out.color));
    }
  };
  print(first);
  if (!flagBool(ctx, 'follow')) return 0;
  return follow(ctx, async () => print(await fetch()));
}

function bytes(value: number | undefined): string {
  if (value === undefined) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = value;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return `${u === 0 ? v : v.toFixed(1)}${units[u]}`;
}

async function metrics(ctx: CommandContext): Promise<number> {
  const id = arg(ctx, 'ID');
  const body = await ctx.client().get(`/deployments/${enc(id)}/metrics`, { target: { kind: 'deployment', name: id } });
  if (wantsJson(ctx)) {
    ctx.out.stdout.write(json(body));
    return 0;
  }
  const m = records([body])[0] ?? {};
  const rows = records(m.instances).map((i) => {
    const mem = sub(i, 'memory');
    const net = sub(i, 'network');
    const disk = sub(i, 'disk_io');
    const pids = sub(i, 'pids');
    return [
      text(i, 'instance_name', text(i, 'instance_id')),
      `${(num(i, 'cpu_usage_percent') ?? 0).toFixed(1)}%`,
      `${bytes(num(mem, 'usage_bytes'))} / ${bytes(num(mem, 'limit_bytes'))}`,
      `${bytes(num(net, 'rx_bytes'))} / ${bytes(num(net, 'tx_bytes'))}`,
      `${bytes(num(disk, 'read_bytes'))} / ${bytes(num(disk, 'write_bytes'))}`,
      `${num(pids, 'current') ?? '-'}`,
      `${num(i, 'restart_count') ?? 0}`,
    ];
  });
  ctx.out.stdout.write(renderTable(['Instance', 'CPU', 'Memory (use / limit)', 'Net (rx / tx)', 'Disk (read / write)', 'PIDs', 'Restarts'], rows));
  ctx.out.stdout.write(`total: ${num(m, 'instance_count') ?? rows.length} instance(s), CPU ${(num(m, 'total_cpu_usage_percent') ?? 0).toFixed(1)}%, memory ${bytes(num(sub(m, 'total_memory'), 'usage_bytes'))}\n`);
  return 0;
}

async function healthChecks(ctx: CommandContext): Promise<number> {
  const id = arg(ctx, 'ID');
  const query = { latest: flagBool(ctx, 'latest') ? true : undefined, limit: flagInt(ctx, 'limit', 1) };
  const list = records(await ctx.client().get(`/deployments/${enc(id)}/health-checks`, { query, target: { kind: 'deployment', name: id } }));
  if (wantsJson(ctx)) {
    ctx.out.stdout.write(json(list));
    return 0;
  }
  const rows = list.map((h) => {
    const status = text(h, 'status');
    return [text(h, 'check_type'), paint(status, statusColor(status), ctx.out.color), formatTime(h.started_at), formatTime(h.finished_at), text(h, 'message', '')];
  });
  ctx.out.stdout.write(renderTable(['Type', 'Status', 'Started at (UTC)', 'Finished at (UTC)', 'Message'], rows));
  return 0;
}

export type { ApiClient };
export { EXIT };
