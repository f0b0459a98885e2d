import nodemailer from "nodemailer";
import type { Logger } from "../logger.js";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail. Over SMTP when SMTP_URL is set; otherwise into the log, for development. */
export interface Mailer {
  /** `smtp`: messages go out; `log`: they are only written to the server log (no SMTP_URL). */
  readonly delivery: "smtp" | "log";
  send(message: MailMessage): Promise<void>;
  close(): void;
}

export function createMailer(options: { smtpUrl: string | undefined; from: string; logger: Logger }): Mailer {
  const { smtpUrl, from, logger } = options;
  if (!smtpUrl) {
    return {
      delivery: "log",
      async send(message) {
        // Development only: with no mail server the message goes to the log, its subject (which
        // carries any sign-in code) in the message itself, so a person can spot it at a glance.
        logger.warn({ to: message.to, text: message.text }, `mail not sent (no SMTP_URL), logged instead: to ${message.to}: ${message.subject}`);
      },
      close() {},
    };
  }
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    delivery: "smtp",
    async send(message) {
      await transport.sendMail({ from, ...message });
    },
    close() {
      transport.close();
    },
  };
}
