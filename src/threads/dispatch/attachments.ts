/**
 * `t3_dispatch` `attachments` (issue 18 item 4, CONTRACT.md "Parallel work"): checked in full
 * before anything is sent, then stored on T3 with `assets.persistChatAttachments`
 * (RELEASED-0.1.md §3); the message carries only the references T3 answers. The bytes never
 * reach the state file: the stored command holds references, a key's fingerprint a hash.
 */
import type { FleetMachine } from "../../fleet/fleet.ts";
import { decodeAttachmentRefs } from "../../t3/decode/attachment.ts";
import type { AttachmentRef } from "../../t3/model.ts";
import { ThreadError } from "../errors.ts";
import { isUnsupported, unsupportedError } from "../unsupported.ts";

export interface AttachmentArg {
	name: string;
	mime_type: string;
	/** The file's bytes, base64 (RFC 4648, with padding). */
	data: string;
}

/** What `assets.persistChatAttachments` takes for one attachment. */
export interface PreparedAttachment {
	type: "image" | "file" | "pdf" | "video";
	name: string;
	mimeType: string;
	sizeBytes: number;
	dataUrl: string;
}

const MiB = 1024 * 1024;
/** T3's limit a message (chatAttachment.ts). */
export const ATTACHMENTS_MAX = 8;
export const ATTACHMENT_NAME_MAX = 255;
/** All of one dispatch's attachments together, decoded: a `/mcp` request is capped at 4 MiB. */
export const ATTACHMENTS_TOTAL_MAX = 3 * MiB;
// One character class, no groups: a grouped pattern gives up (no match) on ~10 MiB of text.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const isBase64 = (data: string) => data.length % 4 === 0 && BASE64.test(data);
// type/subtype with RFC 6838 name characters, optional parameters are not taken.
const MIME =
	/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

/** T3's attachment type for a MIME type, and its limit for that type. */
function kindOf(mime: string): {
	type: PreparedAttachment["type"];
	max: number;
} {
	const m = mime.toLowerCase();
	if (m.startsWith("image/")) return { type: "image", max: 10 * MiB };
	if (m === "application/pdf") return { type: "pdf", max: 20 * MiB };
	if (m.startsWith("video/")) return { type: "video", max: 20 * MiB };
	return { type: "file", max: 20 * MiB };
}

function decodedSize(data: string): number {
	const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
	return (data.length / 4) * 3 - padding;
}

/** T3's bound on an attachment's MIME type (its chat attachment schema). */
const MIME_MAX = 100;

function nameProblem(name: string): string | null {
	const length = [...name].length;
	if (length === 0) return "must not be empty";
	// T3 refuses a name of whitespace only (its schema trims and requires one character).
	if (name.trim() === "") return "must not be blank";
	if (length > ATTACHMENT_NAME_MAX)
		return `${length} characters is over the limit of ${ATTACHMENT_NAME_MAX}`;
	if (/[/\\]/.test(name))
		return "must not contain a path separator (/ or \\): give the file name only";
	if (/\p{Cc}/u.test(name)) return "must not contain control characters";
	if (name === "." || name === "..") return "is not a file name";
	return null;
}

/** Checks every attachment (each error names it and the limit); nothing is sent before. */
export function checkAttachments(
	list: AttachmentArg[] | undefined,
): PreparedAttachment[] {
	if (list === undefined) return [];
	if (list.length > ATTACHMENTS_MAX)
		throw new ThreadError(
			`attachments: ${list.length} attachments is over T3's limit of ${ATTACHMENTS_MAX} a message.`,
		);
	let total = 0;
	const prepared = list.map((a, i): PreparedAttachment => {
		const problem = nameProblem(a.name);
		if (problem !== null)
			throw new ThreadError(
				`attachments[${i}].name: ${problem} (got ${JSON.stringify(a.name.slice(0, 60))}${a.name.length > 60 ? "…" : ""}).`,
			);
		const which = `attachments[${i}] ("${a.name}")`;
		if (a.mime_type.length > MIME_MAX)
			throw new ThreadError(
				`${which}.mime_type: ${a.mime_type.length} characters is over T3's limit of ${MIME_MAX}.`,
			);
		if (!MIME.test(a.mime_type))
			throw new ThreadError(
				`${which}.mime_type: not a MIME type (type/subtype, e.g. "image/png" or "text/plain").`,
			);
		if (!isBase64(a.data))
			throw new ThreadError(
				`attachments[${i}].data: not base64 (${which}: standard alphabet A-Z a-z 0-9 + /, padded with = to a multiple of 4 characters, no whitespace or data: prefix).`,
			);
		const sizeBytes = decodedSize(a.data);
		const kind = kindOf(a.mime_type);
		if (sizeBytes > kind.max)
			throw new ThreadError(
				`${which}: ${sizeBytes} bytes is over T3's limit of ${kind.max / MiB} MiB for a${kind.type === "image" ? "n image" : ` ${kind.type}`}.`,
			);
		total += sizeBytes;
		return {
			type: kind.type,
			name: a.name,
			mimeType: a.mime_type,
			sizeBytes,
			dataUrl: `data:${a.mime_type};base64,${a.data}`,
		};
	});
	if (total > ATTACHMENTS_TOTAL_MAX)
		throw new ThreadError(
			`attachments: ${total} bytes together (decoded) is over the limit of 3 MiB (${ATTACHMENTS_TOTAL_MAX} bytes) a dispatch; the largest is attachments[${largest(prepared)}] ("${prepared[largest(prepared)]?.name}"). Send fewer or smaller files, or put them in the project and refer to them.`,
		);
	return prepared;
}

function largest(list: PreparedAttachment[]): number {
	let at = 0;
	list.forEach((a, i) => {
		if (a.sizeBytes > (list[at]?.sizeBytes ?? 0)) at = i;
	});
	return at;
}

/**
 * Stores the attachments on T3 for this message and returns the references the message
 * carries; none: nothing is asked. A server without the RPC is said plainly.
 */
export async function persistAttachments(
	entry: FleetMachine,
	threadId: string,
	messageId: string,
	prepared: PreparedAttachment[],
): Promise<AttachmentRef[]> {
	if (prepared.length === 0) return [];
	const unsupported = () =>
		unsupportedError(
			entry.config.name,
			"attachments",
			"assets.persistChatAttachments",
			"dispatch without attachments, or put the files in the project and refer to them.",
		);
	if (!entry.machine.persistAttachments) throw unsupported();
	try {
		return await entry.machine.persistAttachments({
			threadId,
			messageId,
			attachments: prepared,
		});
	} catch (error) {
		if (isUnsupported(error)) throw unsupported();
		throw new ThreadError(
			`Machine "${entry.config.name}" did not store the attachments (the message was not sent): ${(error as Error).message}`,
		);
	}
}

/** The attachments as an idempotency key claims them: each one's bytes by their SHA-256 only. */
export function attachmentsClaim(
	list: AttachmentArg[] | undefined,
): Record<string, string>[] | undefined {
	return list?.map((a) => ({
		name: a.name,
		mime_type: a.mime_type,
		sha256: new Bun.CryptoHasher("sha256").update(a.data).digest("hex"),
	}));
}

/** A message row's attachments as t3_thread lists them (decoded leniently), never bytes. */
export function attachmentsShape(
	raw: unknown,
): { name: string; mime_type: string; size: number }[] {
	return decodeAttachmentRefs(raw).map((a) => ({
		name: a.name,
		mime_type: a.mimeType,
		size: a.sizeBytes,
	}));
}
