import { json, isRecord, renderTable, text, type ApiRecord } from '../output.js';
import { wantsJson, type CommandContext } from '../run-context.js';

function gib(record: ApiRecord, key: string): string {
  const value = record[key];
  return typeof value === 'number' ? `${value.toFixed(2)} GiB` : '-';
}

export async function run(ctx: CommandContext): Promise<number> {
  const node = await ctx.client().get('/node/get', { target: { kind: 'node', name: 'local' } });
  if (wantsJson(ctx) || !isRecord(node)) {
    ctx.out.stdout.write(json(node));
    return 0;
  }
  const load = Array.isArray(node.load_average) ? node.load_average.map((v) => (typeof v === 'number' ? v.toFixed(2) : '?')).join(' ') : '-';
  const rows = [
    ['Hostname', text(node, 'hostname')],
    ['OS', text(node, 'os')],
    ['Arch', text(node, 'arch')],
    ['Uptime', text(node, 'uptime')],
    ['CPUs', text(node, 'cpu_count')],
    ['Memory total', gib(node, 'memory_total')],
    ['Memory available', gib(node, 'memory_available')],
    ['Load average', load],
  ];
  ctx.out.stdout.write(renderTable(['Field', 'Value'], rows));
  return 0;
}
