// A real SMTP server on a loopback port (smtp-server), collecting what it is sent, and a small reader for
// the messages nodemailer writes (headers plus a text body, possibly quoted-printable, or a
// multipart/alternative of a text and an HTML part).
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** RCPT TO addresses. */
  to: string[];
  from: string;
  headers: Record<string, string>;
  subject: string;
  /** The text body (the text/plain part of a multipart message), decoded. */
  text: string;
  /** The text/html part of a multipart message, decoded. */
  html?: string;
  /** Each part's Content-Type, for a multipart message. */
  parts?: string[];
  raw: string;
}

/** What the server answers a recipient: accept (undefined), or refuse with an SMTP code (451, 550). */
type RecipientAnswer = (address: string) => { code: number; message: string } | undefined;

export interface SmtpReceiver {
  port: number;
  /** SMTP_URL for the app. The server offers STARTTLS with a self-signed certificate: ignore it. */
  url: string;
  messages: ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtpServer(options: { answer?: RecipientAnswer } = {}): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      const refusal = options.answer?.(address.address);
      if (!refusal) return callback();
      callback(Object.assign(new Error(refusal.message), { responseCode: refusal.code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const to = session.envelope.rcptTo.map((r) => r.address);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        messages.push({ ...parseMessage(raw), to, from, raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}/?ignoreTLS=true`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Headers (unfolded, names lowercased) and the decoded text (and HTML) of a message. */
export function parseMessage(raw: string): {
  headers: Record<string, string>;
  subject: string;
  text: string;
  html?: string;
  parts?: string[];
} {
  const split = raw.indexOf('\r\n\r\n') >= 0 ? raw.indexOf('\r\n\r\n') : raw.indexOf('\n\n');
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, ' ');
  const body = raw.slice(split).replace(/^(\r?\n){2}/, '');
  const headers: Record<string, string> = {};
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const boundary = /^multipart\/[\w-]+;.*boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  if (boundary) {
    const parts = body
      .split(`--${boundary}`)
      .slice(1)
      .filter((part) => !part.startsWith('--'))
      .map((part) => parseMessage(part.replace(/^\r?\n/, '')));
    const typeOf = (p: { headers: Record<string, string> }) => p.headers['content-type'] ?? '';
    return {
      headers,
      subject: decodeEncodedWords(headers.subject ?? ''),
      text: parts.find((p) => /^text\/plain/i.test(typeOf(p)))?.text ?? '',
      html: parts.find((p) => /^text\/html/i.test(typeOf(p)))?.text,
      parts: parts.map(typeOf),
    };
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  let text = body;
  if (encoding === 'quoted-printable') text = decodeQuotedPrintable(body);
  else if (encoding === 'base64') text = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return { headers, subject: decodeEncodedWords(headers.subject ?? ''), text: text.replace(/\r\n/g, '\n') };
}

function decodeQuotedPrintable(text: string): string {
  const joined = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const hex = joined.slice(i + 1, i + 3);
    if (joined[i] === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(joined[i] as string, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeEncodedWords(text: string): string {
  // Whitespace between two encoded words is not part of the text (RFC 2047, 6.2).
  return text
    .replace(/(\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_all, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    );
}
