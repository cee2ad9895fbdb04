import { readFileSync } from 'node:fs';
import { applyTimeoutMs, findExisting, planDeployment, settled, type PlanAction } from '../apply-plan.js';
import { enc, listDeploymentsIn, type ApiClient } from '../client.js';
import { CliError, errorText, EXIT } from '../errors.js';
import { buildLookup, parseEnvFile } from '../interpolate.js';
import { parseManifestText, readManifest, type DeploymentBody, type Manifest } from '../manifest.js';
import { paint, records, statusColor, text, type ApiRecord } from '../output.js';
import { readStdin } from '../read-stdin.js';
import { flagBool, flagList, flagString, type CommandContext } from '../run-context.js';

const POLL_MS = 1000;

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read '${path}': ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

async function loadManifest(ctx: CommandContext): Promise<Manifest> {
  const file = flagString(ctx, 'file');
  if (file === undefined) throw new CliError(`'apply' needs -f/--file FILE`);
  const envFiles = flagList(ctx, 'env-file').map((path) => {
    const parsed = parseEnvFile(readText(path), path);
    if (parsed.errors.length > 0) throw new CliError(`env file '${path}' is invalid`, EXIT.general, parsed.errors.map((e) => `  ${e}`));
    return parsed.values;
  });
  const source = file === '-' ? '(stdin)' : file;
  const text = file === '-' ? await readStdin(ctx.stdin) : readText(file);
  const parsed = parseManifestText(text, source);
  const result = parsed.problems.length > 0 ? { manifest: { namespaces: [], deployments: [] }, problems: parsed.problems } : readManifest(parsed.doc, buildLookup(ctx.env, envFiles));
  if (result.problems.length > 0) {
    throw new CliError(
      `manifest '${source}' is invalid (${result.problems.length} problem${result.problems.length === 1 ? '' : 's'})`,
      EXIT.general,
      result.problems.map((p) => `  ${p.path}: ${p.message}`),
    );
  }
  return result.manifest;
}

interface Outcome {
  label: string;
  exitCode: number;
  summary: string;
}

export async function run(ctx: CommandContext): Promise<number> {
  const manifest = await loadManifest(ctx);
  const dryRun = flagBool(ctx, 'dry-run');
  const force = flagBool(ctx, 'force');
  const verbose = flagBool(ctx, 'verbose');
  const log = (line: string) => ctx.out.stderr.write(`${line}\n`);
  const client = ctx.client(verbose ? log : undefined);
  const outcomes: Outcome[] = [];
  const prefix = dryRun ? '(dry run) ' : '';

  // 1. Namespaces first; existing ones are skipped. Listing them needs namespaces:read; a token without it
  //    still works: creation then tells (409 = exists).
  const known = manifest.namespaces.length > 0 ? await listNamespaces(client) : new Set<string>();
  for (const name of manifest.namespaces) {
    if (known !== null && known.has(name)) {
      ctx.out.stdout.write(`${prefix}namespace ${name}: exists, skipped\n`);
      continue;
    }
    if (dryRun) {
      ctx.out.stdout.write(`${prefix}namespace ${name}: ${known === null ? 'would be created unless it exists (not authorized to list namespaces)' : 'would be created'}\n`);
      continue;
    }
    try {
      await client.call('POST', '/namespaces', { body: { name }, target: { kind: 'namespace', name } });
      ctx.out.stdout.write(`namespace ${name}: created\n`);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      if (error.exitCode === EXIT.conflict) {
        ctx.out.stdout.write(`namespace ${name}: exists, skipped\n`);
        continue;
      }
      outcomes.push({ label: `namespace ${name}`, exitCode: error.exitCode, summary: '' });
      report(ctx, error);
    }
  }

  // 2. Compare with what runs (GET per namespace) to decide create / update / unchanged.
  const live = new Map<string, ApiRecord[]>();
  for (const namespace of new Set(manifest.deployments.map((d) => d.body.namespace))) {
    // An unknown namespace simply lists nothing.
    live.set(namespace, await listDeploymentsIn(client, namespace));
  }
  const plans = manifest.deployments.map(({ key, body }) => ({
    key,
    body,
    plan: planDeployment(body, findExisting(live.get(body.namespace) ?? [], body.namespace, body.name)),
  }));

  if (dryRun) {
    for (const { body, plan } of plans) ctx.out.stdout.write(`${prefix}${describe(body, plan, force)}\n`);
    return firstFailure(outcomes);
  }

  // 3. Post what changed, then follow each until it runs or fails.
  const posted: { body: DeploymentBody; id: string; verb: string }[] = [];
  for (const { key, body, plan } of plans) {
    const label = `deployment ${body.namespace}/${body.name}`;
    if (plan.action === 'unchanged' && !force) {
      outcomes.push({ label, exitCode: 0, summary: `${label}: unchanged (${plan.existingId})` });
      continue;
    }
    if (verbose) log(`${describe(body, plan, force)}`);
    try {
      const created = await client.call('POST', '/deployments', {
        query: force ? { force: true } : undefined,
        body,
        target: { kind: 'deployment', name: `${body.namespace}/${body.name}` },
        violationPrefix: `deployments.${key}`,
      });
      const record = records([created])[0];
      const id = record ? text(record, 'id', '') : '';
      if (id === '') throw new CliError(`${label}: the server returned no id`);
      posted.push({ body, id, verb: plan.action === 'create' ? 'created' : 'updated' });
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      report(ctx, error);
      outcomes.push({ label, exitCode: error.exitCode, summary: `${label}: not applied` });
    }
  }
  const timeoutMs = applyTimeoutMs(ctx.env);
  const waited = await Promise.all(posted.map((p) => waitFor(ctx, client, p, timeoutMs)));
  outcomes.push(...waited);
  for (const o of outcomes) if (o.summary) ctx.out.stdout.write(`${o.summary}\n`);
  return firstFailure(outcomes);
}

function firstFailure(outcomes: readonly Outcome[]): number {
  return outcomes.find((o) => o.exitCode !== 0)?.exitCode ?? 0;
}

function report(ctx: CommandContext, error: CliError): void {
  ctx.out.stderr.write(errorText(error.message, error.details));
}

/** Names of the existing namespaces; null when the token may not list them. */
async function listNamespaces(client: ApiClient): Promise<Set<string> | null> {
  try {
    const list = records(await client.get('/namespaces', { target: { kind: 'namespaces', name: '*', list: true } }));
    return new Set(list.map((n) => text(n, 'name', '')));
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.unauthorized && client.hasToken) return null;
    throw error;
  }
}

function describe(body: DeploymentBody, plan: PlanAction, force: boolean): string {
  const label = `deployment ${body.namespace}/${body.name}`;
  if (plan.action === 'create') return `${label}: would be created (image ${body.image}, ${body.replicas} replica${body.replicas === 1 ? '' : 's'})`;
  if (plan.action === 'unchanged') return `${label}: unchanged${force ? ', would be re-applied (--force)' : ''} (${plan.existingId})`;
  return `${label}: would be updated${force ? ' (forced: instances replaced at once)' : ''}: ${plan.changes.join('; ')}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until running/completed (ok) or a terminal failure, or until the apply timeout. */
async function waitFor(ctx: CommandContext, client: ApiClient, posted: { body: DeploymentBody; id: string; verb: string }, timeoutMs: number): Promise<Outcome> {
  const label = `deployment ${posted.body.namespace}/${posted.body.name}`;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    let status = last;
    try {
      const record = records([await client.get(`/deployments/${enc(posted.id)}`, { target: { kind: 'deployment', name: posted.id } })])[0];
      status = record ? text(record, 'status', '') : '';
    } catch (error) {
      // A transient hiccup while waiting is not the deployment's failure; a 404 means it is gone.
      if (error instanceof CliError && error.exitCode === EXIT.notFound) {
        return { label, exitCode: EXIT.notFound, summary: `${label}: ${posted.verb}, then disappeared (${posted.id})` };
      }
    }
    if (status !== last && status !== '') {
      ctx.out.stderr.write(`  ${label}: ${paint(status, statusColor(status), ctx.out.colorErr)}\n`);
      last = status;
    }
    const state = settled(status, posted.body.kind);
    if (state === 'ok') return { label, exitCode: 0, summary: `${label}: ${posted.verb}, ${status} (${posted.id})` };
    if (state === 'failed') {
      const reason = await lastError(client, posted.id);
      return { label, exitCode: EXIT.general, summary: `${label}: ${posted.verb}, ${status}${reason ? `: ${reason}` : ''} (${posted.id})` };
    }
    if (Date.now() >= deadline) {
      return { label, exitCode: EXIT.general, summary: `${label}: ${posted.verb}, still ${last || 'unknown'} after ${timeoutMs / 1000} s (${posted.id})` };
    }
    await sleep(POLL_MS);
  }
}

/** The newest error event explains a failure better than the status alone. */
async function lastError(client: ApiClient, id: string): Promise<string | undefined> {
  try {
    const events = records(await client.get(`/deployments/${enc(id)}/events`, { query: { level: 'error', limit: 1 }, target: { kind: 'deployment', name: id } }));
    return events[0] ? text(events[0], 'message', '') || undefined : undefined;
  } catch {
    return undefined;
  }
}
