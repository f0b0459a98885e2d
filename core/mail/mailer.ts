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
        // Development only: with no mail server the message (and any code in it) goes to the log.
        logger.warn({ to: message.to, subject: message.subject, text: message.text }, "mail not sent (no SMTP_URL); logged instead");
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
