import express, { type Request, type RequestHandler, type Response } from "express";
import type Provider from "oidc-provider";
import type { InteractionResults } from "oidc-provider";
import { accountLabel } from "../../core/accounts/accounts.js";
import { getAgent, listAgents } from "../../core/agents/agents.js";
import { claimAgentIdAccount, startAgentIdSignIn } from "../../core/auth/agentid/sessions.js";
import { requestOtp, signInWithOtp } from "../../core/auth/otp.js";
import { Email } from "../../core/auth/schemas.js";
import { hmacHex, safeEqual } from "../../core/auth/tokens.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { findConnection, recordConnection } from "../../core/oauth/connections.js";
import { knownScopes, OAUTH_SCOPES } from "../../core/oauth/scopes.js";
import { servingRequest } from "../http/deadline.js";
import { NOTICE_PAGE_HEADERS } from "../http/notice-page.js";
import { CONNECTION_LIFETIME_MS, mcpResource, OAUTH_PATHS } from "./endpoints.js";
import { authorizationServer } from "./lazy-provider.js";
import { codePage, consentPage, problemPage, signInPage } from "./pages.js";

type Interaction = Awaited<ReturnType<Provider["interactionDetails"]>>;

const AGENTID_COOKIE = "agentline_agentid_session";
// The notice page's, but the Referer (and so the Origin of a form) stays on this site: with
// no-referrer a browser sends `Origin: null`, which the forms' origin check refuses.
const PAGE_HEADERS = { ...NOTICE_PAGE_HEADERS, "Referrer-Policy": "same-origin" };
const parseForm = express.urlencoded({ extended: false, limit: "8kb", parameterLimit: 20 });

/**
 * The pages of a sign-in for an MCP client, at /oauth/interaction/{uid}: the
 * e-mail code (with the OTP limits of POST /v1/auth/otp), AgentID where configured, then the
 * consent, whose Allow makes the connection. The interaction is oidc-provider's, bound to the
 * browser by its cookie (SameSite=Lax), so any process can serve any step. Each form also carries
 * a token derived from the interaction, and a cross-site Origin is refused.
 */
export function interactionPages(core: Core): RequestHandler {
  return (req, res, next) => {
    const match = /^\/oauth\/interaction\/([A-Za-z0-9_-]{1,64})(?:\/(email|code|consent|agentid))?\/?$/.exec(req.path);
    if (!match) return next();
    const [, uid, step] = match as unknown as [string, string, string | undefined];
    const serve = async () => {
      res.set(PAGE_HEADERS);
      const provider = await authorizationServer(core);
      let interaction: Interaction;
      try {
        interaction = await provider.interactionDetails(req, res);
      } catch {
        return send(
          res,
          400,
          problemPage(
            "This sign-in has expired",
            "It was started too long ago, finished already, or opened in another browser.",
            "Start again from the app that sent you here.",
          ),
        );
      }
      if (interaction.uid !== uid)
        return send(res, 400, problemPage("This sign-in has expired", "This page belongs to another sign-in.", "Start again from the app that sent you here."));
      const page = new Steps(core, provider, interaction, req, res);
      if (req.method === "GET" && step === undefined) return page.show();
      if (req.method === "GET" && step === "agentid") return page.agentIdDone();
      if (req.method !== "POST" || step === undefined) return send(res, 405, problemPage("Not here", "This page takes no such request."));
      await new Promise<void>((resolve, reject) => parseForm(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
      if (!page.formIsOurs())
        return send(res, 403, problemPage("This form was not sent from this sign-in", "Open the sign-in again from the app that sent you here."));
      if (step === "email") return page.sendCode();
      if (step === "code") return page.checkCode();
      if (step === "agentid") return page.startAgentId();
      return page.decide();
    };
    servingRequest(req, res, serve).catch((error: unknown) => {
      // oidc-provider's refusals (an interaction that ended meanwhile, say) are the person's dead end, not ours.
      const refusal = error as { statusCode?: number; error?: string; error_description?: string };
      if (res.headersSent || typeof refusal.error !== "string" || !refusal.statusCode || refusal.statusCode >= 500) return next(error);
      send(
        res,
        refusal.statusCode,
        problemPage("This sign-in cannot go on", `${refusal.error}: ${refusal.error_description ?? ""}`, "Start again from the app that sent you here."),
      );
    });
  };
}

function send(res: Response, status: number, html: string): void {
  res.status(status).type("html").send(html);
}

/** One request's step of one interaction. */
class Steps {
  private readonly base: string;

  constructor(
    private readonly core: Core,
    private readonly provider: Provider,
    private readonly interaction: Interaction,
    private readonly req: Request,
    private readonly res: Response,
  ) {
    this.base = `${OAUTH_PATHS.interaction}/${interaction.uid}`;
  }

  /** The interaction's form token: only a page this server rendered for it has it. */
  private get csrf(): string {
    return hmacHex(this.core.secrets.derive("oauth-form"), this.interaction.uid);
  }

  formIsOurs(): boolean {
    const origin = this.req.get("origin");
    if (origin !== undefined && origin !== new URL(this.core.baseUrl).origin) return false;
    const sent = (this.req.body as Record<string, unknown> | undefined)?.csrf;
    return typeof sent === "string" && safeEqual(sent, this.csrf);
  }

  private field(name: string): string {
    const value = (this.req.body as Record<string, unknown> | undefined)?.[name];
    return typeof value === "string" ? value.trim() : "";
  }

  private async clientName(): Promise<string> {
    const client = await this.provider.Client.find(String(this.interaction.params.client_id));
    return client?.clientName ?? String(this.interaction.params.client_id);
  }

  async show(): Promise<void> {
    // `?account=other` from the consent page: someone else signs in on this browser.
    if (this.interaction.prompt.name === "login" || this.req.query.account === "other") return this.signIn(200);
    if (this.interaction.prompt.name === "consent") return this.consent(200);
    send(this.res, 400, problemPage("This sign-in cannot go on", `It asks for a step this service does not offer (${this.interaction.prompt.name}).`));
  }

  private async signIn(status: number, error?: string, email?: string): Promise<void> {
    send(
      this.res,
      status,
      signInPage({
        action: `${this.base}/email`,
        csrf: this.csrf,
        clientName: await this.clientName(),
        email,
        error,
        agentIdAction: this.core.config.agentId ? `${this.base}/agentid` : undefined,
      }),
    );
  }

  private codeForm(status: number, email: string, options: { error?: string; logged?: boolean } = {}): void {
    send(this.res, status, codePage({ action: `${this.base}/code`, restart: this.base, csrf: this.csrf, email, ...options }));
  }

  async sendCode(): Promise<void> {
    const email = this.field("email");
    if (!Email.safeParse(email).success) return this.signIn(400, "Enter a valid e-mail address.", email);
    try {
      const sent = await requestOtp(this.core, { email, ip: this.req.ip ?? "unknown" });
      this.codeForm(200, sent.email, { logged: sent.status === "logged" });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await this.signIn(error.status, error.message, email);
    }
  }

  async checkCode(): Promise<void> {
    const email = this.field("email");
    const code = this.field("code");
    if (!Email.safeParse(email).success) return this.signIn(400, "Enter a valid e-mail address.");
    if (!/^\d{6}$/.test(code)) return this.codeForm(400, email, { error: "The code is the 6 digits from the e-mail." });
    let accountId: string;
    try {
      ({ accountId } = await signInWithOtp(this.core, { email, otp: code, ip: this.req.ip ?? "unknown" }));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const message =
        error.code === "invalid_otp" ? "That code is wrong or has expired. Check the newest e-mail, or use another address to get a new code." : error.message;
      return this.codeForm(error.status, email, { error: message });
    }
    await this.signInAs(accountId);
  }

  /**
   * Ends the step with this account signed in. Someone else signing in on a browser already
   * signed in here ("Sign in with another address") ends the earlier sign-in first: oidc-provider
   * would otherwise send the browser through a logout page that needs JavaScript.
   */
  private async signInAs(accountId: string): Promise<void> {
    const returnTo = await this.provider.interactionResult(this.req, this.res, { login: { accountId, remember: false } }, { mergeWithLastSubmission: false });
    const signedIn = this.interaction.session?.accountId;
    if (signedIn && signedIn !== accountId) {
      // The interaction forgets the earlier sign-in (as oidc-provider's own logout step does), and that sign-in ends.
      const interaction = await this.provider.Interaction.find(this.interaction.uid);
      if (interaction?.session) {
        delete (interaction.session as { uid?: string }).uid;
        await interaction.persist();
      }
      const name = this.provider.cookieName("session");
      const sessionId = new RegExp(`(?:^|;\\s*)${name}=([^;]+)`).exec(this.req.get("cookie") ?? "")?.[1];
      if (sessionId) await (await this.provider.Session.find(decodeURIComponent(sessionId)))?.destroy();
    }
    this.res.redirect(303, returnTo);
  }

  async startAgentId(): Promise<void> {
    if (!this.core.config.agentId) return this.show();
    let started: Awaited<ReturnType<typeof startAgentIdSignIn>>;
    try {
      started = await startAgentIdSignIn(this.core, { ip: this.req.ip ?? "unknown", continueUrl: `${this.core.baseUrl}${this.base}/agentid` });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return this.signIn(error.status, error.message);
    }
    // The sign-in's id, for this browser only: the page it comes back to collects the account with it.
    this.res.cookie(AGENTID_COOKIE, started.session_id, {
      httpOnly: true,
      sameSite: "lax",
      secure: this.core.baseUrl.startsWith("https:"),
      path: this.base,
      maxAge: started.expires_in * 1000,
    });
    this.res.redirect(303, started.authorize_url);
  }

  async agentIdDone(): Promise<void> {
    const sessionId = /(?:^|;\s*)agentline_agentid_session=([^;]+)/.exec(this.req.get("cookie") ?? "")?.[1];
    const accountId = sessionId ? await claimAgentIdAccount(this.core, decodeURIComponent(sessionId)) : null;
    this.res.clearCookie(AGENTID_COOKIE, { path: this.base });
    if (!accountId) return this.signIn(400, "The AgentID sign-in did not complete in this browser. Try again, or use an e-mail code.");
    await this.signInAs(accountId);
  }

  private async consent(status: number, error?: string): Promise<void> {
    const accountId = this.interaction.session!.accountId;
    const connection = await this.existingConnection();
    const redirect = String(this.interaction.params.redirect_uri ?? "");
    const agents = connection
      ? undefined
      : (await listAgents(this.core, accountId, { limit: 100, offset: 0 })).data.map((a) => ({ agentId: a.agent_id, name: a.name }));
    send(
      this.res,
      status,
      consentPage({
        action: `${this.base}/consent`,
        switchAccount: `${this.base}?account=other`,
        csrf: this.csrf,
        clientName: await this.clientName(),
        clientId: String(this.interaction.params.client_id),
        redirectHost: URL.canParse(redirect) ? new URL(redirect).host : redirect,
        account: await accountLabel(this.core.db, accountId),
        scopes: this.askedScopes().map((name) => ({ name, description: OAUTH_SCOPES[name] })),
        ...(agents
          ? { agents }
          : {
              fixedAgent: connection!.agentId
                ? await getAgent(this.core, accountId, connection!.agentId).then((a) => ({ agentId: a.agent_id, name: a.name }))
                : null,
            }),
        error,
      }),
    );
  }

  /** The scopes the client asks for now (those not granted to it already). */
  private askedScopes() {
    const details = this.interaction.prompt.details as { missingResourceScopes?: Record<string, string[]> };
    return knownScopes((details.missingResourceScopes?.[mcpResource(this.core)] ?? []).join(" "));
  }

  /** The connection an earlier consent in this browser made for this client, when it asks for more. */
  private async existingConnection() {
    return this.interaction.grantId ? findConnection(this.core, this.interaction.grantId) : undefined;
  }

  async decide(): Promise<void> {
    if (this.interaction.prompt.name !== "consent") return this.show();
    const body = this.req.body as Record<string, unknown>;
    if (body.Deny !== undefined || body.Allow === undefined) {
      return this.finish({ error: "access_denied", error_description: "The account holder did not allow this client." }, false);
    }
    const accountId = this.interaction.session!.accountId;
    const clientId = String(this.interaction.params.client_id);
    const existing = await this.existingConnection();
    const agentId = existing ? existing.agentId : this.field("agent_id") || null;
    if (!existing && agentId) {
      const { data } = await listAgents(this.core, accountId, { limit: 100, offset: 0 });
      if (!data.some((a) => a.agent_id === agentId)) return this.consent(400, "That agent is not one of this account's. Choose again.");
    }
    const grant =
      (existing && (await this.provider.Grant.find(existing.connectionId))) || new this.provider.Grant({ jti: newId("conn"), accountId, clientId } as never);
    const details = this.interaction.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(" "));
    if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(" "));
    const connectionId = await grant.save();
    const redirect = String(this.interaction.params.redirect_uri ?? "");
    await recordConnection(this.core, {
      connectionId,
      accountId,
      clientId,
      clientName: await this.clientName(),
      redirectHost: URL.canParse(redirect) ? new URL(redirect).host : redirect,
      scope: grant.getResourceScope(mcpResource(this.core)),
      agentId: agentId ?? null,
      expiresAt: existing?.expiresAt ?? new Date(this.core.now().getTime() + CONNECTION_LIFETIME_MS),
    });
    await this.finish({ consent: { grantId: connectionId } }, true);
  }

  /** Hands the step's result to oidc-provider and sends the browser on to it. */
  private async finish(result: InteractionResults, merge: boolean): Promise<void> {
    const returnTo = await this.provider.interactionResult(this.req, this.res, result, { mergeWithLastSubmission: merge });
    this.res.redirect(303, returnTo);
  }
}
