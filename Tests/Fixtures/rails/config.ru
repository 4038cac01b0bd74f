# frozen_string_literal: true
# Rack entry point of the Action Cable fixture server: WebSocket at /cable, control API under /control/.
require_relative "server"
run FixtureApp
