/**
 * The Twilio stand-ins open in this test process. Kept apart from the stand-in itself (no
 * OpenAPI, no servers) so the hook in fail-fast.ts costs nothing in files that use no Twilio.
 */
export const liveStandIns = new Set<{ takeNewViolations(): string[] }>();
