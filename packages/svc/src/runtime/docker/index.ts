export { createDockerRuntime, supportsExecConsoleSize, type DockerRuntimeOptions } from './docker-runtime.js';
export { classifyDockerFailure, dockerFailureFacts, redactSecrets, type Classification, type DockerFailureFacts, type DockerPhase } from './classify.js';
export {
  LABEL_DEPLOYMENT,
  LABEL_KIND,
  LABEL_MANAGED,
  LABEL_NAME,
  LABEL_NAMESPACE,
  LABEL_SPEC_HASH,
  LABEL_VOLUME_DEPLOYMENT,
  containerName,
  dockerVolumeName,
  namespaceNetworkName,
  normalizeImageReference,
} from './container-config.js';
