// Builders and a tiny simulated executor for the plan tests. Not a test file itself.
import type { DeploymentSpec } from '../../src/domain/deployment.js';
import type { WebhookEvent, WebhookEventKind, WebhookPayloads } from '../../src/domain/events.js';
import type { ObservedInstance } from '../../src/runtime/runtime.js';
import {
  plan,
  type Action,
  type CheckHealth,
  type DesiredDeployment,
  type InstanceHealth,
  type PlanInput,
  type RemovalReason,
  type SchedulerState,
} from '../../src/scheduler/plan.js';
import { baseDeploymentSpec } from '../support/deployment-spec.js';

export const NOW = 1_800_000_000_000;

export function spec(overrides: Partial<DeploymentSpec> = {}): DeploymentSpec {
  return baseDeploymentSpec(overrides);
}

export const TCP_CHECK = { type: 'tcp', port: 80, interval: '10s', timeout: '5s', threshold: 3, on_failure: 'restart' } as const;

export function deployment(overrides: Partial<DesiredDeployment> = {}, specOverrides: Partial<DeploymentSpec> = {}): DesiredDeployment {
  const id = overrides.id ?? 'd1';
  return {
    id,
    spec: spec(specOverrides),
    specHash: `hash-${id}`,
    parentId: null,
    force: false,
    status: 'pending',
    restartCount: 0,
    retryCount: 0,
    statusSince: NOW - 1000,
    backoffUntil: null,
    ...overrides,
  };
}

let counter = 0;
export function instance(d: DesiredDeployment, overrides: Partial<ObservedInstance> = {}): ObservedInstance {
  counter += 1;
  const id = overrides.id ?? `${d.id}-i${counter}`;
  return {
    id,
    name: `${d.spec.namespace}_${d.spec.name}_${String(counter).padStart(8, '0')}`,
    deploymentId: d.id,
    specHash: d.specHash,
    state: 'running',
    exitCode: null,
    startedAt: new Date(NOW - 60_000 + counter).toISOString(),
    finishedAt: null,
    address: '172.18.0.2',
    imageDigest: null,
    ...overrides,
  };
}

export function check(overrides: Partial<CheckHealth> = {}): CheckHealth {
  return { lastStatus: 'success', consecutiveFailures: 0, everSucceeded: true, handled: false, lastMessage: null, ...overrides };
}

export function healthy(...instances: ObservedInstance[]): InstanceHealth[] {
  return instances.map((i) => ({ instanceId: i.id, checks: [check()] }));
}

export function run(input: Partial<PlanInput> & { deployments: DesiredDeployment[] }): Action[] {
  return plan({ observed: [], health: [], inFlight: { creations: [], removals: [] }, now: NOW, ...input });
}

export function creates(actions: Action[], deploymentId?: string): number {
  return actions.filter((a) => a.type === 'create' && (deploymentId === undefined || a.deploymentId === deploymentId)).length;
}

export function removals(actions: Action[]): [string, RemovalReason][] {
  return actions.flatMap((a): [string, RemovalReason][] => (a.type === 'remove' ? [[a.instanceId, a.reason]] : []));
}

export function states(actions: Action[], deploymentId?: string): SchedulerState[] {
  return actions.flatMap((a) =>
    a.type === 'setStatus' && (deploymentId === undefined || a.deploymentId === deploymentId) ? [a.state] : [],
  );
}

export function lastState(actions: Action[], deploymentId: string): SchedulerState | undefined {
  return states(actions, deploymentId).at(-1);
}

export function webhooks<K extends WebhookEventKind>(actions: Action[], kind: K): WebhookPayloads[K][] {
  return actions.flatMap((a) => (a.type === 'emit' && a.event.kind === kind ? [a.event.payload as WebhookPayloads[K]] : []));
}

export function allWebhooks(actions: Action[]): WebhookEvent[] {
  return actions.flatMap((a) => (a.type === 'emit' ? [a.event] : []));
}

export function reasons(actions: Action[]): string[] {
  return actions.flatMap((a) => (a.type === 'record' ? [a.event.reason] : []));
}

/** A simulated store + runtime that applies actions the way the executor will. */
export class SimulatedWorld {
  deployments: DesiredDeployment[];
  observed: ObservedInstance[] = [];
  health = new Map<string, InstanceHealth>();
  purged: string[] = [];
  now = NOW;
  private next = 0;

  /** With `readyOnCreate` false, new instances report no probe result until a test marks them. */
  constructor(
    deployments: DesiredDeployment[],
    private readonly readyOnCreate = true,
  ) {
    this.deployments = deployments.map((d) => ({ ...d }));
  }

  input(): PlanInput {
    return {
      deployments: this.deployments,
      observed: this.observed,
      health: [...this.health.values()],
      inFlight: { creations: [], removals: [] },
      now: this.now,
    };
  }

  /** Applies every action; creations come up `running` and, when checks exist, passing. */
  apply(actions: Action[]): void {
    for (const action of actions) {
      switch (action.type) {
        case 'setStatus': {
          const d = this.deployments.find((x) => x.id === action.deploymentId);
          if (d !== undefined) Object.assign(d, action.state);
          break;
        }
        case 'remove':
          this.observed = this.observed.filter((i) => i.id !== action.instanceId);
          this.health.delete(action.instanceId);
          break;
        case 'create': {
          const d = this.deployments.find((x) => x.id === action.deploymentId);
          if (d === undefined) break;
          this.next += 1;
          const created = instance(d, { id: `${d.id}-sim${this.next}` });
          this.observed.push(created);
          if (d.spec.health_checks.length > 0) {
            const initial = this.readyOnCreate ? check() : check({ lastStatus: null, everSucceeded: false });
            this.health.set(created.id, { instanceId: created.id, checks: d.spec.health_checks.map(() => initial) });
          }
          break;
        }
        case 'ackHealth': {
          const h = this.health.get(action.instanceId)?.checks[action.checkIndex];
          if (h !== undefined) h.handled = true;
          break;
        }
        case 'purge':
          this.deployments = this.deployments.filter((d) => d.id !== action.deploymentId);
          this.purged.push(action.deploymentId);
          break;
        case 'emit':
        case 'record':
          break;
      }
    }
  }

  step(): Action[] {
    const actions = plan(this.input());
    this.apply(actions);
    return actions;
  }

  get(id: string): DesiredDeployment {
    const d = this.deployments.find((x) => x.id === id);
    if (d === undefined) throw new Error(`no deployment ${id}`);
    return d;
  }

  instancesOf(id: string): ObservedInstance[] {
    return this.observed.filter((i) => i.deploymentId === id);
  }
}
