/**
 * A real SMTP server on 127.0.0.1 (the npm package `smtp-server`, Nodemailer's own server library) that keeps every
 * message it accepts, parsed with `mailparser`. It insists on the user and password it was given (AUTH PLAIN/LOGIN
 * over the plain connection, as a local relay would take them), and can be told to refuse messages (451, a temporary
 * failure) to test retries.
 */
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  /** The links (http…) in the text, in order. */
  links: string[];
}

export interface SmtpPeer {
  /** smtp://user:pass@127.0.0.1:PORT */
  url: string;
  user: string;
  password: string;
  received: ReceivedMail[];
  /** Messages refused so far (mode "refuse"). */
  refused: number;
  setMode(mode: "accept" | "refuse"): void;
  /** Waits until `count` messages arrived in all (or throws after `ms`). */
  waitFor(count: number, ms?: number): Promise<ReceivedMail[]>;
  stop(): Promise<void>;
}

function toMail(parsed: ParsedMail): ReceivedMail {
  const to = (Array.isArray(parsed.to) ? parsed.to : parsed.to ? [parsed.to] : []).flatMap((a) => a.value.map((v) => v.address ?? ""));
  const text = parsed.text ?? "";
  return { to, from: parsed.from?.value[0]?.address ?? "", subject: parsed.subject ?? "", text, links: [...text.matchAll(/https?:\/\/\S+/g)].map((m) => m[0]) };
}

/** Starts the server; `user`/`password` are the credentials it accepts. */
export async function startSmtpPeer(opts: { user?: string; password?: string } = {}): Promise<SmtpPeer> {
  const user = opts.user ?? "mailer";
  const password = opts.password ?? "s3cret-smtp-pass";
  let mode: "accept" | "refuse" = "accept";
  const received: ReceivedMail[] = [];
  const peer = { refused: 0 };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    authMethods: ["PLAIN", "LOGIN"],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) callback(null, { user });
      else callback(new Error("535 Authentication failed"));
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (mode === "refuse") {
          peer.refused += 1;
          const error = new Error("Mailbox busy, try later") as Error & { responseCode: number };
          error.responseCode = 451;
          callback(error);
          return;
        }
        simpleParser(Buffer.concat(chunks))
          .then((parsed) => {
            received.push(toMail(parsed));
            callback();
          })
          .catch((error: Error) => callback(error));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `smtp://${user}:${password}@127.0.0.1:${port}`,
    user,
    password,
    received,
    get refused() {
      return peer.refused;
    },
    setMode(next) {
      mode = next;
    },
    async waitFor(count, ms = 10_000) {
      const until = Date.now() + ms;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} messages, got ${received.length}`);
        await Bun.sleep(20);
      }
      return received;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
