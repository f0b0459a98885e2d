import { turnSettings } from "../core/config/turns.js";

/**
 * The filler, in the words the tools use: a model slower than the turn timeout heard it every
 * turn and, not told of it, added its own. The tool text is built once per process, so it names
 * the defaults (TURN_TIMEOUT_MS, TURN_FILLER_TEXT), as "by default".
 */
const seconds = turnSettings.shape.TURN_TIMEOUT_MS.parse(undefined) / 1000;
const filler = turnSettings.shape.TURN_FILLER_TEXT.parse(undefined);

export const FILLER_NOTE =
  `Without a final answer within the turn timeout (${seconds} s by default) the service says "${filler}" itself, once per turn, ` +
  "even after an interim line; a later answer is still spoken. Never send a filler of your own.";
