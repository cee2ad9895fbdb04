// Namespaces, secrets, volumes, configs, webhooks. Owned by the resources area.
import type { Migration } from './types.js';

export const RESOURCE_MIGRATIONS: readonly Migration[] = [];
