// Outgoing mail through nodemailer: to SMTP_URL when set; otherwise each message is rendered to an
// .eml file under the outbox folder and summarised in the log, so the sandbox shows what would be sent.
// nodemailer is loaded with the first message: a process that sends none starts without it.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';

interface MailMessage {
  to: string;
  replyTo?: string;
  subject: string;
  text: string;
  html?: string;
  /** The Message-ID, without its angle brackets: a mail sent again after a crash is the same message. */
  messageId?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** Milliseconds. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

export function createMailer(options: {
  smtpUrl?: string;
  from: string;
  outboxDir: string;
  logger: Logger;
}): Mailer {
  const { smtpUrl, from, outboxDir, logger } = options;
  if (smtpUrl) {
    // Reminders are sent while the API request waits, so a mail server that does not answer must fail
    // within seconds, not nodemailer's default minutes. Options in the URL's query (ignoreTLS=true for a
    // local server without TLS, greetingTimeout=…, tls.rejectUnauthorized=false) take precedence.
    const transport = lazyTransport((mailer) => mailer.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS }));
    return {
      async send({ messageId, ...message }) {
        await (await transport.get()).sendMail({
          from,
          ...message,
          ...(messageId && { messageId: `<${messageId}>` }),
        });
      },
      close: transport.close,
    };
  }
  const transport = lazyTransport((mailer) =>
    mailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }),
  );
  return {
    async send({ messageId, ...message }) {
      const info = await (await transport.get()).sendMail({
        from,
        ...message,
        ...(messageId && { messageId: `<${messageId}>` }),
      });
      await mkdir(outboxDir, { recursive: true });
      const file = join(outboxDir, `${Date.now()}-${info.messageId.replace(/[^\w.-]/g, '')}.eml`);
      await writeFile(file, info.message as Buffer);
      logger.info(
        { mail: { to: message.to, subject: message.subject, file } },
        'mail written to outbox (no SMTP_URL)',
      );
    },
    close: transport.close,
  };
}

/** A nodemailer transport made, and nodemailer loaded, on the first message; close() closes it if made. */
function lazyTransport<T extends { close(): void }>(make: (mailer: typeof import('nodemailer')) => T) {
  let made: Promise<T> | undefined;
  return {
    get(): Promise<T> {
      made ??= import('nodemailer').then((loaded) => make(loaded.default));
      return made;
    },
    close(): void {
      made?.then((transport) => transport.close()).catch(() => undefined);
    },
  };
}
