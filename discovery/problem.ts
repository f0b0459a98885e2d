import { z } from "zod";

/** The RFC 9457 problem body every error response carries. */
export const Problem = z
  .object({
    type: z.string().meta({ description: "A URI naming the problem type; GET it for a description." }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().meta({ description: "What went wrong in this request, for a human." }),
    code: z.string().meta({ description: "A stable snake_case code to branch on.", example: "validation_error" }),
    errors: z
      .array(z.object({ field: z.string(), message: z.string() }))
      .optional()
      .meta({ description: "With 422: one entry per offending field." }),
    request_id: z.string().meta({ description: "Quote it when reporting a problem." }),
  })
  .catchall(z.unknown())
  .meta({ id: "Problem" });
