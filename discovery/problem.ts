import { z } from "zod";

const FieldProblem = z
  .object({
    field: z.string().meta({ description: "The field's name: a dotted path into the body (`metadata.note`), a query parameter, or a header name." }),
    in: z.enum(["query", "body", "header", "path"]).meta({ description: "Where the request carried the field." }),
    message: z.string(),
  })
  .meta({ id: "FieldProblem" });

const PaymentNote = z
  .object({
    credited: z.string().meta({ description: "What the payment credited, USD", example: "0.001000" }),
    balance: z.string().meta({ description: "The wallet's balance now, USD: the payment stays there" }),
    currency: z.literal("USD"),
    payer: z.string().meta({ description: "The wallet that paid" }),
    agent_token: z.string().nullable().meta({
      description:
        "Spends the balance on the /v1/x402 routes ('Authorization: Bearer at_...'): minted here, once, for a wallet paying with no credential whose account has no live token; null otherwise (the account's tokens spend it).",
    }),
    test_money: z.boolean(),
    detail: z.string(),
  })
  .meta({ id: "PaymentNote", description: "On a paid request that was refused after its payment was settled: where the money went." });

/** The RFC 9457 problem body every error response carries. */
export const Problem = z
  .object({
    type: z.string().meta({ description: "A URI naming the problem type; GET it for a description." }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().meta({ description: "What went wrong in this request, for a human." }),
    code: z.string().meta({ description: "A stable snake_case code to branch on.", example: "validation_error" }),
    errors: z
      .array(FieldProblem)
      .optional()
      .meta({ description: "With 422: one entry per offending field, saying where it was (at most 20; field names cut to 64 characters)." }),
    errors_omitted: z.number().int().optional().meta({ description: "With 422: how many more offending fields there were than `errors` lists." }),
    max_depth: z
      .number()
      .int()
      .optional()
      .meta({ description: "With 400 malformed_json for JSON over the limits: the deepest nesting of arrays and objects the service reads (64)." }),
    max_containers: z
      .number()
      .int()
      .optional()
      .meta({ description: "With 400 malformed_json for JSON over the limits: the most arrays and objects one JSON text may hold (10,000)." }),
    payment: PaymentNote.optional(),
    request_id: z.string().meta({ description: "Quote it when reporting a problem." }),
  })
  .catchall(z.unknown())
  .meta({
    id: "Problem",
    description:
      "RFC 9457 problem details. A 402 also carries `price`, `currency`, `payment_methods`, `topup` and `discovery`, and x402 v1's `x402Version` and `accepts` " +
      "(so a v1 client can pay with X-PAYMENT); a 429 carries `retry_after`.",
  });
