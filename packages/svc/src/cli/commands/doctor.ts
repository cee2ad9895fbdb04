import { formatCheck, runtimeChecks, runtimesToCheck, secretKeyCheck } from '../doctor-checks.js';
import { paint } from '../output.js';
import { machineProbe } from '../probe.js';
import type { CommandContext } from '../run-context.js';

export async function run(ctx: CommandContext): Promise<number> {
  const { config } = ctx.resolved();
  const results = [secretKeyCheck(ctx.env.SVC_SECRET_KEY), ...(await runtimeChecks(config, runtimesToCheck(config.runtime.enabled), machineProbe(ctx.env)))];
  for (const result of results) ctx.out.stdout.write(`${formatCheck(result, (t, ok) => paint(t, ok ? 'green' : 'red', ctx.out.color))}\n`);
  const failed = results.filter((r) => !r.ok).length;
  ctx.out.stdout.write(failed === 0 ? 'all checks passed\n' : `${failed} check(s) failed\n`);
  return failed === 0 ? 0 : 1;
}
