import { enc, listDeploymentsIn } from '../client.js';
import { selectPrunable } from '../deployments-view.js';
import { EXIT, CliError } from '../errors.js';
import { formatTime, json, records, renderTable, text } from '../output.js';
import { arg, flagBool, wantsJson, type CommandContext } from '../run-context.js';

export async function run(ctx: CommandContext): Promise<number> {
  const client = ctx.client();
  switch (ctx.command.path[1]) {
    case 'create': {
      const name = arg(ctx, 'NAME');
      const created = await client.call('POST', '/namespaces', { body: { name }, target: { kind: 'namespace', name }, violationPrefix: '' });
      const id = records([created])[0];
      ctx.out.stdout.write(`${id ? text(id, 'id', name) : name}\n`);
      return 0;
    }
    case 'list': {
      const list = records(await client.get('/namespaces', { target: { kind: 'namespaces', name: '*', list: true } }));
      if (wantsJson(ctx)) ctx.out.stdout.write(json(list));
      else {
        const rows = list.map((n) => [text(n, 'id'), text(n, 'name'), formatTime(n.created_at), formatTime(n.updated_at)]);
        ctx.out.stdout.write(renderTable(['Id', 'Name', 'Created at (UTC)', 'Updated at (UTC)'], rows));
      }
      return 0;
    }
    case 'prune':
      return prune(ctx, arg(ctx, 'NAMESPACE'), flagBool(ctx, 'all'));
  }
  throw new CliError(`unknown command`);
}

/** There is no prune endpoint: list the namespace's deployments and delete those the prune rule selects. */
async function prune(ctx: CommandContext, namespace: string, all: boolean): Promise<number> {
  const client = ctx.client();
  const deployments = (await listDeploymentsIn(client, namespace)).filter((d) => text(d, 'namespace', '') === namespace);
  const selected = selectPrunable(deployments, all);
  let firstFailure = EXIT.ok as number;
  for (const d of selected) {
    const id = text(d, 'id');
    try {
      await client.call('DELETE', `/deployments/${enc(id)}`, { target: { kind: 'deployment', name: id } });
      ctx.out.stdout.write(`deleted ${id} ${text(d, 'name')} (${text(d, 'status')})\n`);
    } catch (error) {
      // A deployment purged meanwhile is already gone: that is the goal, not a failure.
      if (error instanceof CliError && error.exitCode === EXIT.notFound) continue;
      if (!(error instanceof CliError)) throw error;
      ctx.out.stderr.write(`error: ${error.message}\n`);
      if (firstFailure === EXIT.ok) firstFailure = error.exitCode;
    }
  }
  ctx.out.stderr.write(`pruned ${selected.length} of ${deployments.length} deployment(s) in namespace '${namespace}'\n`);
  return firstFailure;
}
