//! The MCP server's answers to everything but a tool's own work: what it declares
//! (`get_info`), each call routed through the tools with its refusal logged, and the
//! resources, completions, prompts and log level handed to their own files. A client whose
//! grant names tools is shown only those and refused the others (`not_granted`) before any
//! argument is read.
//!
//! Kept apart from `mod.rs`, which holds the tools, so neither grows past one concept.

use rmcp::handler::server::tool::ToolCallContext;
#[allow(deprecated)] // SetLevelRequestParams: logging is deprecated by SEP-2577.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResultType, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, tool_handler};

use super::{INSTRUCTIONS, VaultMcp, completion, logging, prompts, refusal, resources, target};
use crate::engine::Engine;
use crate::service::Target;

impl VaultMcp {
    /// Every tool's name, in the router's order: what a grant's tool list may name.
    pub(crate) fn tool_names() -> Vec<String> {
        Self::tool_router().list_all().into_iter().map(|t| t.name.to_string()).collect()
    }
}

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
        let decodes = resources::decodes(&request.uri);
        let read = move |e: &Engine, t: &Target| resources::read(e, t, &request.uri);
        let read =
            if decodes { self.run_decoding(&ctx, read).await } else { self.run(&ctx, read).await };
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
        let answer = match target(&ctx).grant.check_tool(&tool) {
            Ok(()) => Self::tool_router().call(ToolCallContext::new(self, request, ctx)).await,
            Err(e) => Ok(refusal(&e).into()),
        };
        if let Ok(CallToolResponse::Complete(r)) = &answer
            && r.is_error == Some(true)
        {
            let text: String =
                r.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
            logging::refused(&peer, level, &tool, &text).await;
        }
        answer
    }

    /// The tools, or for a client limited to some, only those (a list that differs by client
    /// is cached by that client only).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        let grant = target(&ctx).grant;
        let hints = ctx.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let scope = if grant.tools.is_empty() { CacheScope::Public } else { CacheScope::Private };
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            tools: Self::tool_router()
                .list_all()
                .into_iter()
                .filter(|t| grant.may_call(&t.name))
                .collect(),
            meta: None,
            next_cursor: None,
            ttl_ms: hints.then_some(0),
            cache_scope: hints.then_some(scope),
        })
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
