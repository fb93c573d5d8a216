//! The MCP server's answers to everything but a tool's own work: what it declares
//! (`get_info`), each call routed through the tools with its refusal logged, and the
//! resources, completions, prompts and log level handed to their own files.
//!
//! Kept apart from `mod.rs`, which holds the tools, so neither grows past one concept.

use rmcp::handler::server::tool::ToolCallContext;
#[allow(deprecated)] // SetLevelRequestParams: logging is deprecated by SEP-2577.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, tool_handler};

use super::{INSTRUCTIONS, VaultMcp, completion, logging, prompts, resources, target};

#[tool_handler]
impl ServerHandler for VaultMcp {
    fn get_info(&self) -> ServerConfig {
        // Resources without `subscribe` or `listChanged`: nothing sends either notification
        // (resources.rs says why).
        #[allow(deprecated)] // Logging is deprecated by SEP-2577; clients still speak it.
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("mdvault", env!("CARGO_PKG_VERSION"))
                    .with_title("mdvault: search and edit a Markdown vault"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let listed = self.run(&ctx, move |e, t| resources::list(e, t, cursor.as_deref())).await;
        let (items, next) = listed.map_err(|e| resources::rpc_error(&e))?;
        let mut page = ListResourcesResult::with_all_items(items);
        page.next_cursor = next;
        Ok(page)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![resources::template()]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceResponse, ErrorData> {
        let read = self.run(&ctx, move |e, t| resources::read(e, t, &request.uri)).await;
        Ok(ReadResourceResult::new(read.map_err(|e| resources::rpc_error(&e))?).into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<CompleteResult, ErrorData> {
        let done = self.run(&ctx, move |e, t| completion::complete(e, t, &request)).await;
        Ok(CompleteResult::new(done.map_err(|e| resources::rpc_error(&e))?))
    }

    /// Every tool call, through the router; a refusal is also told as a log message to a
    /// client that asked for them, and index progress while the call runs.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let (level, peer, tool) =
            (self.logging.level_for(&ctx), ctx.peer.clone(), request.name.clone());
        let _watch = self.logging.watch_call(&ctx, self.engine.clone());
        let answer = Self::tool_router().call(ToolCallContext::new(self, request, ctx)).await;
        if let Ok(CallToolResponse::Complete(r)) = &answer
            && r.is_error == Some(true)
        {
            let text: String =
                r.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
            logging::refused(&peer, level, &tool, &text).await;
        }
        answer
    }

    #[allow(deprecated)] // Logging is deprecated by SEP-2577; clients still speak it.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<(), ErrorData> {
        self.logging.set(request.level, self.engine.clone(), ctx.peer.clone());
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<GetPromptResponse, ErrorData> {
        let (engine, target) = (self.engine.clone(), target(&ctx));
        let (name, args) = (request.name, request.arguments);
        let built =
            tokio::task::spawn_blocking(move || prompts::get(&engine, &target, &name, args));
        let prompt = built.await.map_err(|e| ErrorData::internal_error(e.to_string(), None))??;
        Ok(prompt.into())
    }
}
