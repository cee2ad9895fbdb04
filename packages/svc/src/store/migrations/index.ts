// Every migration of the product, one file per area so areas evolve independently.
import type { Migration } from './types.js';
import { CORE_MIGRATIONS } from './001-core.js';
import { RESOURCE_MIGRATIONS } from './002-resources.js';
import { DEPLOYMENT_MIGRATIONS } from './003-deployments.js';
import { WEBHOOK_DELIVERY_MIGRATIONS } from './004-webhook-delivery.js';
import { SCHEDULER_MIGRATIONS } from './005-scheduler.js';

export type { Migration };
export const MIGRATIONS: readonly Migration[] = [...CORE_MIGRATIONS, ...RESOURCE_MIGRATIONS, ...DEPLOYMENT_MIGRATIONS, ...WEBHOOK_DELIVERY_MIGRATIONS, ...SCHEDULER_MIGRATIONS];
