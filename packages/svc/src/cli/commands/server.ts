import type { CommandContext } from '../run-context.js';

export async function run(ctx: CommandContext): Promise<number> {
  // Server code (fastify, SQLite, Docker) loads only here, never for client commands.
  const { runServer } = await import('../../server/main.js');
  await runServer({ configPath: ctx.global.config, context: ctx.global.context });
  return 0;
}
