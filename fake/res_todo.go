package fake

func (s *Server) registerBackends()  {}
func (s *Server) registerEvents()    {}
func (s *Server) registerOperators() {}
