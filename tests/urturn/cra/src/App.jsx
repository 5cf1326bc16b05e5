import React, { useEffect, useState } from 'react';
import { ThemeProvider, createTheme, Typography, Stack, Button } from '@mui/material';
import client, { events } from '@urturn/client';

const theme = createTheme({ palette: { mode: 'dark' } });

export default function App() {
  const [roomState, setRoomState] = useState(client.getRoomState() || {});
  const [me, setMe] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    events.on('stateChanged', setRoomState);
    client.getLocalPlayer().then(setMe);
    return () => events.off('stateChanged', setRoomState);
  }, []);
  const board = (roomState.state && roomState.state.board) || [[null, null, null], [null, null, null], [null, null, null]];
  return (
    <ThemeProvider theme={theme}>
      <Stack spacing={1} padding={2}>
        <Typography variant="h4" color="text.primary">TicTacToe (CRA + MUI)</Typography>
        <Typography id="me" color="text.primary">{me ? me.username : ''}</Typography>
        <Typography id="error" color="error.light">{error}</Typography>
        {board.map((row, x) => (
          <Stack direction="row" key={x}>
            {row.map((mark, y) => (
              <Button key={y} data-cell={`${x},${y}`} sx={{ border: 1, width: 80, height: 80 }}
                onClick={async () => { const { error: e } = await client.makeMove({ x, y }); setError(e ? e.message : ''); }}>
                <Typography fontSize="40px" color="text.primary">{mark}</Typography>
              </Button>
            ))}
          </Stack>
        ))}
      </Stack>
    </ThemeProvider>
  );
}
