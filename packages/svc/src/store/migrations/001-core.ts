// Users and the one token table (sessions and PATs). Owned by the auth area.
import type { Migration } from './types.js';

export const CORE_MIGRATIONS: readonly Migration[] = [];
