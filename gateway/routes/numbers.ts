import { attachNumber, buyNumber, getNumber, listNumbers, reassignNumber, releaseNumber } from "../../core/numbers/numbers.js";
import { AttachQuery, BuyNumberBody, ListNumbersQuery, NumberIdParams, PhoneNumberRecord, ReassignQuery } from "../../core/numbers/schemas.js";
import { listOf } from "../../core/schemas/common.js";
import { defineRoute } from "../http/route.js";

const tags = ["Numbers"];

export const numberRoutes = [
  defineRoute({
    operationId: "listNumbers",
    method: "get",
    path: "/v1/numbers",
    summary: "List numbers",
    description: "Newest first. Active numbers unless `status=released`.",
    tags,
    auth: "api_key",
    query: ListNumbersQuery,
    response: { status: 200, description: "A page of numbers", schema: listOf(PhoneNumberRecord).meta({ id: "PhoneNumberList" }) },
    errors: [404],
    handler: ({ core, auth, query }) => listNumbers(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "buyNumber",
    method: "post",
    path: "/v1/numbers",
    summary: "Buy a number",
    description:
      "Buys a number for an agent and charges its first month (402 `insufficient_balance` if the balance does not cover it); the lease renews monthly. " +
      "The sandbox carrier sells fictional numbers in US, CA (555-01xx) and GB (Ofcom drama ranges). Send an Idempotency-Key to make retries safe.",
    tags,
    auth: "api_key",
    body: BuyNumberBody,
    response: { status: 201, description: "The new number", schema: PhoneNumberRecord },
    errors: [402, 404, 409, 502],
    handler: ({ core, auth, body }) => buyNumber(core, auth.accountId, body),
  }),
  defineRoute({
    operationId: "attachNumber",
    method: "post",
    path: "/v1/numbers/attach",
    summary: "Attach a number bought elsewhere",
    description: "A number the service has ever held (including a released one) cannot be attached.",
    tags,
    auth: "api_key",
    query: AttachQuery,
    response: { status: 201, description: "The attached number", schema: PhoneNumberRecord },
    errors: [404, 409, 502],
    handler: ({ core, auth, query }) => attachNumber(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "getNumber",
    method: "get",
    path: "/v1/numbers/{number_id}",
    summary: "Get a number",
    tags,
    auth: "api_key",
    params: NumberIdParams,
    response: { status: 200, description: "The number", schema: PhoneNumberRecord },
    handler: ({ core, auth, params }) => getNumber(core, auth.accountId, params.number_id),
  }),
  defineRoute({
    operationId: "reassignNumber",
    method: "patch",
    path: "/v1/numbers/{number_id}/reassign",
    summary: "Move a number to another agent",
    tags,
    auth: "api_key",
    params: NumberIdParams,
    query: ReassignQuery,
    response: { status: 200, description: "The number, now the target agent's", schema: PhoneNumberRecord },
    errors: [404, 409],
    handler: ({ core, auth, params, query }) => reassignNumber(core, auth.accountId, params.number_id, query.agent_id),
  }),
  defineRoute({
    operationId: "releaseNumber",
    method: "post",
    path: "/v1/numbers/{number_id}/release",
    summary: "Release a number, permanently",
    description: "The number is never sold or attached again. Releasing it a second time is a 409.",
    tags,
    auth: "api_key",
    params: NumberIdParams,
    response: { status: 200, description: "The released number", schema: PhoneNumberRecord },
    errors: [409, 502],
    handler: ({ core, auth, params }) => releaseNumber(core, auth.accountId, params.number_id),
  }),
];
