import { createServer } from "node:net";

/**
 * Fails fast when the port is taken, before the database is opened and migrated: the error is
 * the listen error itself (EADDRINUSE, EACCES), which the CLI turns into one line. Port 0 (any
 * free port) cannot be taken.
 */
export async function assertPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen({ port, host, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
