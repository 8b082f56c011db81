/**
 * Sending one plain-text email through an SMTP server (nodemailer). `smtp://` speaks plain SMTP and upgrades with
 * STARTTLS when the server offers it; `smtps://` is TLS from the first byte (port 465). Certificates are verified.
 * Every stage has a timeout, so a server that never answers fails the attempt instead of holding it.
 *
 * NB: error messages are passed through `scrub` before they leave: nodemailer's own messages do not contain the URL,
 * but a server's reply could echo the user name, and the password must never reach a log.
 */
import nodemailer from "nodemailer";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface SmtpSender {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** Timeouts of one attempt (ms): connecting, the server's greeting, and silence on the socket. */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as const;

/** Opens a sender for `url` (smtp:// or smtps://[user:pass@]host[:port]) writing `from` as the sender. */
export function smtpSender(url: string, from: string): SmtpSender {
  const parsed = new URL(url);
  const secure = parsed.protocol === "smtps:";
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  const transport = nodemailer.createTransport({
    host: parsed.hostname.replace(/^\[|\]$/g, ""),
    port: parsed.port ? Number(parsed.port) : secure ? 465 : 587,
    secure,
    ...(user ? { auth: { user, pass } } : {}),
    ...TIMEOUTS,
  });
  const scrub = (text: string) => [pass, user, url].filter((s) => s.length >= 3).reduce((t, secret) => t.split(secret).join("[redacted]"), text);
  return {
    async send(message) {
      try {
        await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text });
      } catch (error) {
        throw new Error(scrub(error instanceof Error ? error.message : String(error)));
      }
    },
    close() {
      transport.close();
    },
  };
}
