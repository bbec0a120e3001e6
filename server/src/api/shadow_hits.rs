//! `GET /api/shadow-hits`: the calls shadow gates would have stopped (they ran unasked), newest
//! first: yours, or everyone's for an admin. The queue's Decided tab lists them.

use super::error::ReadErrors;
use axum::{Json, extract::State};
use domain::wire::ShadowHit;
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{ApiError, extract::ApiQuery};
use crate::{auth::CurrentUser, state::AppState, store::shadow_hits};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    /// At most this many (default 100).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/api/shadow-hits",
    operation_id = "listShadowHits",
    tag = "approvals",
    summary = "Calls a shadow gate would have stopped (they ran unasked), newest first",
    params(ListQuery),
    responses(
        (status = 200, description = "OK", body = Vec<ShadowHit>),
        ReadErrors,
    ),
)]
async fn list(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<Vec<ShadowHit>>, ApiError> {
    let limit = query.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::invalid("limit", "limit must be from 1 to 500"));
    }
    Ok(Json(shadow_hits::list(&state.store, user.owner_filter(), limit).await?))
}
