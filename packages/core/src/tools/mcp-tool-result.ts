/**
 * What an MCP server's answer to `tools/call` becomes for the model: text,
 * image blocks, structured content, or the tool error it reports.
 * @internal
 */
import { McpToolError } from "@rein/guard";
import type { ImageBlock, TextBlock } from "../model/content";
import { ToolContent } from "./tool-content";

/** @internal An MCP `CallToolResult` as a Rein tool value (text, or {@link ToolContent}), or the {@link McpToolError} it reports. */
export function toolValue(name: string, result: object): unknown {
  const { content, structuredContent, isError, toolResult } = result as {
    content?: unknown;
    structuredContent?: unknown;
    isError?: unknown;
    toolResult?: unknown;
  };
  // A server of the 2024-10-07 protocol answers { toolResult }.
  if (content === undefined && toolResult !== undefined) return toolResult;
  const blocks = Array.isArray(content) ? content.flatMap(contentBlock) : [];
  if (isError === true) {
    const detail = blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n") || "no details given";
    throw new McpToolError(name, "result", detail);
  }
  const hasImage = blocks.some((block) => block.type === "image");
  if (!hasImage && structuredContent === undefined) return blocks.map((block) => (block as TextBlock).text).join("\n");
  if (blocks.length === 0) return structuredContent;
  return new ToolContent(blocks, structuredContent);
}

/** One MCP content item as what the model can see. */
function contentBlock(item: unknown): (TextBlock | ImageBlock)[] {
  if (typeof item !== "object" || item === null) return [];
  const block = item as Record<string, unknown>;
  switch (block["type"]) {
    case "text":
      return [{ type: "text", text: String(block["text"] ?? "") }];
    case "image":
      return [{ type: "image", source: { type: "base64", mediaType: String(block["mimeType"] ?? "image/png"), data: String(block["data"] ?? "") } }];
    case "audio":
      return [{ type: "text", text: `[audio (${String(block["mimeType"] ?? "unknown type")}) not shown]` }];
    case "resource": {
      const resource = (block["resource"] ?? {}) as Record<string, unknown>;
      if (typeof resource["text"] === "string") return [{ type: "text", text: resource["text"] }];
      return [{ type: "text", text: `[resource ${String(resource["uri"] ?? "")} (${String(resource["mimeType"] ?? "binary")}) not shown]` }];
    }
    case "resource_link":
      return [{ type: "text", text: `Resource: ${String(block["name"] ?? block["uri"] ?? "")} <${String(block["uri"] ?? "")}>` }];
    default:
      return [];
  }
}
