//! Groups of approvers, for admins: list, create, replace members, delete. Each change is
//! audited, and pending approvals whose gate names the group are decided by its new members
//! (engine/src/people/groups.rs). Groups in the configuration file are listed, not changed.

use crate::error::{ApiError, ReadErrors, WriteErrors};
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use domain::wire::{Group, GroupMembers, NewGroup};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::extract::ApiJson;
use crate::{auth::Admin, people::Group as EngineGroup, state::AppState};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(replace_members, delete))
}

fn wire(group: EngineGroup) -> Group {
    Group { name: group.name, members: group.members, from_config: group.from_config, from_idp: group.from_idp }
}

#[utoipa::path(
    get,
    path = "/api/groups",
    operation_id = "listGroups",
    tag = "groups",
    summary = "Groups of approvers (admin): the configuration file's and those made here",
    responses(
        (status = 200, description = "OK", body = Vec<Group>),
        ReadErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn list(State(state): State<AppState>, _admin: Admin) -> Result<Json<Vec<Group>>, ApiError> {
    Ok(Json(state.people.groups().await?.into_iter().map(wire).collect()))
}

#[utoipa::path(
    post,
    path = "/api/groups",
    operation_id = "createGroup",
    tag = "groups",
    summary = "Create a group of approvers (admin; audited)",
    request_body = NewGroup,
    responses(
        (status = 201, description = "Created", body = Group),
        WriteErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn create(
    State(state): State<AppState>,
    Admin(admin): Admin,
    ApiJson(body): ApiJson<NewGroup>,
) -> Result<(StatusCode, Json<Group>), ApiError> {
    let group = state.people.create_group(body.name.trim(), &body.members, &admin.user.username).await?;
    Ok((StatusCode::CREATED, Json(wire(group))))
}

#[utoipa::path(
    put,
    path = "/api/groups/{name}",
    operation_id = "setGroupMembers",
    tag = "groups",
    summary = "Replace a group's members (admin; audited); its pending approvals are decided by the new members",
    params(("name" = String, Path)),
    request_body = GroupMembers,
    responses(
        (status = 200, description = "OK", body = Group),
        WriteErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn replace_members(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<GroupMembers>,
) -> Result<Json<Group>, ApiError> {
    Ok(Json(wire(state.people.set_group_members(&name, &body.members, &admin.user.username).await?)))
}

#[utoipa::path(
    delete,
    path = "/api/groups/{name}",
    operation_id = "deleteGroup",
    tag = "groups",
    summary = "Delete a group (admin; audited); its pending approvals keep their other approvers, else the admins decide",
    params(("name" = String, Path)),
    responses(
        (status = 204, description = "Deleted"),
        WriteErrors,
    ),
    extensions(("x-admin-only" = json!(true))),
)]
async fn delete(State(state): State<AppState>, Admin(admin): Admin, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    state.people.delete_group(&name, &admin.user.username).await?;
    Ok(StatusCode::NO_CONTENT)
}
