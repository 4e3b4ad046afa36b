import Curl

/// Routes libcurl's moments: monitors first, then the task's hooks (its own merged over the
/// session's when the task was made), then "pass the proposal through". It decides nothing
/// itself and writes no task state (Alamofire's `SessionDelegate`).
final class SessionDelegate: MultiHandleDelegate {
    /// The session that owns this delegate, so always there when it is called (held without
    /// reference counting: read on every task moment).
    unowned(unsafe) var session: Session!

    /// What to do with a final response head.
    enum HeadRoute {
        case deliver
        case follow(UpstreamRequest, RedirectState)
        case fail(SluiceError)
    }

    /// - Parameter mayFollow: `false` for a recorded response, which is final.
    func task(_ task: UpstreamTask, didReceiveHead head: ResponseHead, mayFollow: Bool = true) -> HeadRoute {
        session.eventMonitor.task(task, didReceive: head)
        if mayFollow, head.isRedirect, let handler = task.hooks.redirectHandler {
            var state = task.redirectState
            let proposal = state.next(after: task.currentRequest, response: head, bodyWasSent: task.bodyStarted)
            let decision = handler.task(task, willBeRedirectedTo: proposal, for: head)
            session.eventMonitor.task(task, didDecideRedirect: decision, for: head)
            switch decision {
            case .pass: break
            case .follow(let next): return .follow(next, state)
            case .refuse(let error): return .fail(error)
            }
        }
        if let handler = task.hooks.responseHandler,
            case .cancel(let error) = handler.task(task, didReceive: head)
        {
            return .fail(error)
        }
        return .deliver
    }

    func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?) {
        if error == nil, !task.replays, let response = task.response {
            session.eventMonitor.task(task, didDecideCaching: task.decideCaching(for: response))
        }
        session.eventMonitor.task(task, didCompleteWith: error)
        session.taskDidFinish(task)
        task.delegate?.task(task, didCompleteWith: error)
    }

    // MARK: - MultiHandleDelegate

    func multiHandle(_ multi: MultiHandle, didComplete handle: EasyHandle, error: CurlError?) {
        guard let task = handle.delegate as? UpstreamTask else {
            session.recycle(handle)
            return
        }
        task.transferDidComplete(failure: error.map(TransferFailure.curl))
    }
}
