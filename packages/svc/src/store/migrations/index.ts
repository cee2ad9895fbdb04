// Every migration of the product, one file per area so areas evolve independently.
import type { Migration } from './types.js';
import { CORE_MIGRATIONS } from './001-core.js';
import { RESOURCE_MIGRATIONS } from './002-resources.js';
import { DEPLOYMENT_MIGRATIONS } from './003-deployments.js';

export type { Migration };
export const MIGRATIONS: readonly Migration[] = [...CORE_MIGRATIONS, ...RESOURCE_MIGRATIONS, ...DEPLOYMENT_MIGRATIONS];
