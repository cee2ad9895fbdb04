// Every API module, registered in one place. Each module registers its own routes with `config.auth`.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from './context.js';
import { registerSystemRoutes } from './system.js';
import { registerSessionRoutes } from './session.js';
import { registerUserRoutes } from './users.js';
import { registerTokenRoutes } from './tokens.js';
import { registerNamespaceRoutes } from './namespaces.js';
import { registerSecretRoutes } from './secrets.js';
import { registerVolumeRoutes } from './volumes.js';
import { registerConfigRoutes } from './configs.js';
import { registerWebhookRoutes } from './webhooks.js';
import { registerDeploymentRoutes } from './deployments.js';
import { registerDeploymentLogRoutes } from './deployment-logs.js';
import { registerExecRoutes } from './exec.js';
import { registerWebhookDeliveryRoutes } from './webhook-deliveries.js';

export type RouteModule = (app: FastifyInstance, deps: ApiDeps) => void;

export const ROUTE_MODULES: readonly RouteModule[] = [
  registerSystemRoutes,
  registerSessionRoutes,
  registerUserRoutes,
  registerTokenRoutes,
  registerNamespaceRoutes,
  registerSecretRoutes,
  registerVolumeRoutes,
  registerConfigRoutes,
  registerWebhookRoutes,
  registerDeploymentRoutes,
  registerDeploymentLogRoutes,
  registerExecRoutes,
  registerWebhookDeliveryRoutes,
];
